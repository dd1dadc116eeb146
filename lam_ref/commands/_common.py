"""Shared helpers of the command modules: the options every subcommand declares the same way,
checks of inputs and outputs made before any model loads, JSON output, tables, the overall
progress bar, loading embeddings (the table printer itself is :mod:`lam_ref.tables`).

Conventions of every ``lam-ref`` subcommand (documented on the command-line page of the docs):

* exit status **0** when everything succeeded, **1** when some inputs failed (a file that does not
  load or whose processing fails, a failed ``--check``) while the others were processed, **2** for
  a usage error or an unusable input (a bad option value, a missing or unreadable input path, an
  output path that cannot be written): nothing is computed then;
* every error is **one line** on stderr, ``lam-ref COMMAND: error: <file or option>: <problem>``;
* inputs and output paths are checked before any model loads;
* an output folder is never created implicitly: a missing one is an error unless ``--mkdir``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .._io import atomic_write, atomic_write_text, write_json, write_jsonl  # noqa: F401  (re-exported for the commands)
from ..geometry import LamValueError
from ..tables import printable, table  # noqa: F401  (re-exported for the commands)

# ----------------------------------------------------------------------------------------------
# options declared once


def add_json(p: argparse.ArgumentParser, what: str = "the report") -> None:
    """``--json OUT``: machine-readable output (``-`` for stdout; the table then goes to stderr)."""
    p.add_argument("--json", metavar="OUT", help=f"write {what} as JSON (- for stdout)")


def add_threshold(p: argparse.ArgumentParser, *, many: bool = False, default: Any = 0.95) -> None:
    """``--threshold/-t``: the cosine merge threshold t in [-1, 1] (``many``: several)."""
    if many:
        p.add_argument("--threshold", "-t", type=float, nargs="+", default=default, help="cosine thresholds t in [-1, 1]")
    else:
        p.add_argument("--threshold", "-t", type=float, default=default,
                       help=f"cosine merge threshold t in [-1, 1] (default {default})")


def add_encoder(p: argparse.ArgumentParser, *, default: str | None = None) -> None:
    """``--encoder`` and ``--batch-size``: the sentence-transformers model and its batch size."""
    from ..text.encoders import DEFAULT_BATCH_SIZE, DEFAULT_ENCODER

    p.add_argument("--encoder", default=default or DEFAULT_ENCODER,
                   help=f"sentence-transformers name or local path, or 'hash' (tests only); default {DEFAULT_ENCODER}")
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE,
                   help=f"encoding batch size (default {DEFAULT_BATCH_SIZE})")
    add_encoder_backend(p)


def add_encoder_backend(p: argparse.ArgumentParser) -> None:
    """``--encoder-backend {torch,onnx,openvino,openvino-bf16}``: how the model runs (SPEC §4.5; default torch)."""
    from ..text.encoders import BACKENDS, DEFAULT_BACKEND

    p.add_argument("--encoder-backend", choices=BACKENDS, default=DEFAULT_BACKEND,
                   help=f"run the encoder in torch, ONNX Runtime (needs lam_ref[onnx]) or OpenVINO in float32 or "
                        f"bfloat16 (needs lam_ref[openvino]); all but torch run on the cpu an export made once "
                        f"from the local weights; default {DEFAULT_BACKEND}")


def add_device(p: argparse.ArgumentParser) -> None:
    """``--device``: the encoder's device (default: the library's choice)."""
    p.add_argument("--device", help="encoder device (cpu, cuda, ...; default: the library's choice)")


def add_window(p: argparse.ArgumentParser) -> None:
    """``--window``: the window size in cl100k tokens (SPEC §3)."""
    from ..text.chunking import DEFAULT_WINDOW

    p.add_argument("--window", type=_window_value, default=DEFAULT_WINDOW,
                   help=f"window size in cl100k tokens, >= 1 (default {DEFAULT_WINDOW})")


def _window_value(text: str) -> int:
    """``--window``: an integer >= 1, checked while parsing (a usage error, exit 2, before any model
    loads: D15)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {value}")
    return value


#: The values of ``--l0-stubs`` (SPEC §7.3): ``net-positive`` (default) or ``paper``.
L0_STUB_RULES = ("net-positive", "paper")


def add_l0_stubs(p: argparse.ArgumentParser) -> None:
    """``--l0-stubs``: which runs of repeated lines L0 turns into stubs (:data:`L0_STUB_RULES`, SPEC §7.3)."""
    p.add_argument("--l0-stubs", choices=L0_STUB_RULES, default=L0_STUB_RULES[0],
                   help="net-positive (default): a run of repeated lines becomes a stub only when the stub has "
                        "fewer UTF-8 bytes and fewer cl100k tokens than the run (net removal is counted in "
                        "tokens); paper: every run becomes a stub")


def l0_net_positive(args: argparse.Namespace) -> bool:
    """Whether ``--l0-stubs`` asks for the net-positive rule (``CompactionConfig.l0_net_positive``)."""
    return getattr(args, "l0_stubs", L0_STUB_RULES[0]) == "net-positive"


def add_layer_options(p: argparse.ArgumentParser) -> None:
    """The options of LAM's layers that ``compact`` and ``compare`` share (one
    :class:`~lam_ref.text.pipeline.CompactionConfig`, built by :func:`compaction_config`; issue 23 §2):
    ``--window``, ``--window-fit``, ``--driver``, ``--exhaustive``, ``--l0-stubs``, ``--no-reuse``."""
    add_window(p)
    p.add_argument("--window-fit", choices=("encoder", "none"), default="encoder",
                   help="encoder (default): each window ends where the encoder stops reading, so L1 never deletes "
                        "text it did not see (spec §3.4); none: the paper's fixed --window-token windows")
    p.add_argument("--driver", choices=("online", "batch"), default="online",
                   help="L1 driver: Algorithm 1 turn by turn (default) or Algorithm 2")
    p.add_argument("--exhaustive", action="store_true", help="exhaustive candidate search (equals the oracle)")
    add_l0_stubs(p)
    add_reuse(p)


def compaction_config(args: argparse.Namespace, **settings: Any) -> Any:
    """The :class:`~lam_ref.text.pipeline.CompactionConfig` of a command's layer options
    (:func:`add_layer_options`, ``--batch-size``), with ``settings`` (threshold, layers, ...) on top;
    an option the command does not have takes the library default."""
    from ..text.pipeline import CompactionConfig

    defaults = CompactionConfig()
    base = {
        "window": getattr(args, "window", defaults.window),
        "fit_window": getattr(args, "window_fit", "encoder") == "encoder",
        "batch_size": validate_batch_size(getattr(args, "batch_size", defaults.batch_size)),
        "driver": getattr(args, "driver", defaults.driver),
        "exhaustive": bool(getattr(args, "exhaustive", False)),
        "l0_net_positive": l0_net_positive(args),
        "reuse": not getattr(args, "no_reuse", False),
    }
    return CompactionConfig(**(base | settings))


def config_line(config: Any, *, per_row: bool = False) -> str:
    """The layer settings of a run in one line (compact and compare print it; issue 23 §2);
    ``per_row``: without threshold and layers (``compare`` sets them per row)."""
    c = config.to_json()
    search = "exhaustive" if c["exhaustive"] else f"bands r={c['r']} rel={c['rel']}"
    layers = "->".join(x.upper() for x in c["layers"])
    head = "config (t and layers per row): " if per_row else f"config: t={c['threshold']} (δ={c['delta']:.4f}), layers {layers}, "
    return (f"{head}windows <= {c['window']} {c['tokenizer']} tokens (fit: {c['window_fit']}), driver {c['driver']}, "
            f"{search}, batch {c['batch_size']}, stubs {c['l0_stubs']} (L1 and L0), reuse {c['reuse']}")


def add_reuse(p: argparse.ArgumentParser) -> None:
    """``--no-reuse``: encode every window, even one whose text the run already encoded (SPEC §4.4)."""
    p.add_argument("--no-reuse", action="store_true",
                   help="encode every window again, even when the run already encoded its exact text (default: "
                        "each distinct window text is encoded once per run, keyed by its digest; spec §4.4)")


def reuse_line(total: dict[str, Any], enabled: bool) -> str:
    """How many windows went through the encoder and how many reused an earlier encoding of the
    same text (SPEC §4.4), for the people's view of compact, sweep, pairs and compare."""
    enc, reused = total.get("windows_encoded", 0), total.get("windows_reused", 0)
    if not enabled:
        return f"encoding: {enc} windows encoded, none reused (--no-reuse)"
    return (f"encoding: {enc} windows encoded, {reused} reused (their exact text was already encoded in this run; "
            "spec §4.4)")


def add_format(p: argparse.ArgumentParser) -> None:
    """``--format``: the trajectory loader (default: detected per file)."""
    from ..text.loaders import FORMATS

    p.add_argument("--format", choices=FORMATS, help="trajectory loader (default: detect per file)")


def pyplot(option: str = "--plot") -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend, or a :class:`LamValueError` naming
    ``option`` when matplotlib is not installed (it is the optional ``plots`` extra)."""
    try:
        import matplotlib
    except ImportError:
        raise LamValueError(f"{option} needs matplotlib (lam_ref is not on PyPI: pip install -e '.[peers]' "
                            "in its checkout)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def add_progress(p: argparse.ArgumentParser) -> None:
    """``--no-progress``: no overall progress bar on stderr."""
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def add_mkdir(p: argparse.ArgumentParser) -> None:
    """``--mkdir``: create missing output folders (never done otherwise)."""
    p.add_argument("--mkdir", action="store_true", help="create missing output folders (default: a missing folder is an error)")


def add_save_embeddings(p: argparse.ArgumentParser) -> None:
    """``--save-embeddings OUT.npy``: the encoded windows of every trajectory, in corpus order."""
    p.add_argument("--save-embeddings", metavar="OUT.npy",
                   help="save the window embeddings (float32, corpus order; ids in OUT.ids.json) as .npy")


def validate_batch_size(value: Any, name: str = "--batch-size") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise LamValueError(f"{name} must be an integer >= 1, got {value!r}")
    return value


# ----------------------------------------------------------------------------------------------
# inputs and outputs, checked before any model loads


def validate_input_paths(paths: Iterable[str], name: str = "PATH") -> list[str]:
    """Every input path exists and can be read (a file) or listed (a folder): else one
    :class:`LamValueError` naming the path and the problem (exit 2 before any work)."""
    out = []
    for path in paths:
        p = Path(path)
        if not p.exists():
            raise LamValueError(f"{path}: does not exist" + (" (a broken link)" if p.is_symlink() else ""))
        if p.is_dir():
            if not os.access(p, os.R_OK | os.X_OK):
                raise LamValueError(f"{path}: folder cannot be read (permission denied)")
        elif not os.access(p, os.R_OK):
            raise LamValueError(f"{path}: cannot be read (permission denied)")
        out.append(str(path))
    return out


def plan_trajectory_files(paths: Iterable[str], fmt: str | None, command: str | None = None) -> list[tuple[Path, str]]:
    """The trajectory files under ``paths`` with their ids, found before any model loads: a missing
    path, an unreadable one or a folder without trajectory files is a :class:`LamValueError` (exit 2).
    Every entry a folder scan passes over (a folder that cannot be listed, a FIFO, a device, a
    broken or looping link, a file lam-ref wrote) is reported as one ``warning:`` line on stderr."""
    from ..text.loaders import LoadFailure, iter_trajectory_files

    paths = validate_input_paths(paths)
    files: list[tuple[Path, str]] = []
    skips: list[str] = []
    for item in iter_trajectory_files(paths, fmt, skips=skips):
        if isinstance(item, LoadFailure):
            raise LamValueError(item.error)
        files.append(item)
    prefix = f"lam-ref {command}" if command else "lam-ref"
    for line in skips:
        print(f"{prefix}: warning: {printable(line)}", file=sys.stderr)
    return files


def refuse_outputs_in_inputs(inputs: Iterable[str], outputs: Iterable[tuple[str, str | None]]) -> None:
    """No output may be an input file or lie inside an input folder that is read (D1, D12): each
    ``(option, path)`` of ``outputs`` (``None``: not given) that is one of ``inputs``, or lies
    anywhere under an input folder, is a :class:`LamValueError` naming both (exit 2, before any
    work). Paths are compared resolved (links and ``..`` followed), an existing file also by
    identity (a hard link)."""
    ins = [(Path(i), Path(i).resolve()) for i in inputs]
    for option, out in outputs:
        if not out or out == "-":
            continue
        o = Path(out).resolve()
        for raw, rin in ins:
            if raw.is_dir():
                if o == rin or rin in o.parents:
                    raise LamValueError(f"{option} {printable(out)}: lies inside the input folder {printable(raw)}, "
                                        "which is read; write outputs outside the inputs")
            elif o == rin or (o.exists() and raw.exists() and os.path.samefile(o, raw)):
                raise LamValueError(f"{option} {printable(out)}: is the input file {printable(raw)}; "
                                    "an output never replaces an input")


def _probe_dir(directory: Path, what: str) -> None:
    """Create and remove a temporary file in ``directory``: the only reliable test that a file can
    be written there (permissions, read-only mounts, ACLs, quotas of zero)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".lam-ref-probe.", dir=directory)
    except OSError as exc:
        raise LamValueError(f"{what}: folder {str(directory)!r} is not writable ({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(tmp)


def validate_output_file(path: str, name: str, *, mkdir: bool = False) -> None:
    """Refuse, before any work, an output file path that cannot be written: a folder, a file
    inside something that is not a folder, a missing folder (unless ``mkdir``, which creates it
    now), a folder where no file can be created, or an existing file that cannot be replaced."""
    p = Path(path)
    what = f"{name} {path}"
    if p.is_dir():
        raise LamValueError(f"{what}: is a directory; give a file path")
    parent = p.parent
    if not parent.exists():
        anc = parent
        while not anc.exists() and anc != anc.parent:
            anc = anc.parent
        if not anc.is_dir():
            raise LamValueError(f"{what}: {str(anc)!r} is not a directory")
        if not mkdir:
            raise LamValueError(f"{what}: folder {str(parent)!r} does not exist (create it, or pass --mkdir)")
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LamValueError(f"{what}: cannot create folder {str(parent)!r}: {exc.strerror or exc}") from None
    if not parent.is_dir():
        raise LamValueError(f"{what}: {str(parent)!r} is not a directory")
    _probe_dir(parent, what)
    if p.exists() and not p.is_file():
        raise LamValueError(f"{what}: exists and is not a regular file")


def validate_output_dir(path: str, name: str, *, mkdir: bool = False) -> None:
    """Refuse, before any work, an output folder that exists as something else, is missing (unless
    ``mkdir``, which creates it now) or where no file can be created."""
    p = Path(path)
    what = f"{name} {path}"
    if p.exists() and not p.is_dir():
        raise LamValueError(f"{what}: exists and is not a directory")
    if not p.exists():
        if not mkdir:
            raise LamValueError(f"{what}: folder does not exist (create it, or pass --mkdir)")
        anc = p
        while not anc.exists() and anc != anc.parent:
            anc = anc.parent
        if not anc.is_dir():
            raise LamValueError(f"{what}: {str(anc)!r} is not a directory")
        try:
            p.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LamValueError(f"{what}: cannot create folder: {exc.strerror or exc}") from None
    _probe_dir(p, what)


def validate_json_dest(dest: str | None, *, mkdir: bool = False) -> None:
    """``--json``: ``-`` (stdout) or a writable file path."""
    if dest and dest != "-":
        validate_output_file(dest, "--json", mkdir=mkdir)


# ----------------------------------------------------------------------------------------------
# the overall progress bar


def plural(n: int, word: str) -> str:
    """``n`` and ``word``, plural unless ``n == 1`` (the progress lines; issue 35 §5).

    Examples:
        >>> plural(1, "trajectory"), plural(0, "trajectory"), plural(2, "file"), plural(1, "window")
        ('1 trajectory', '0 trajectories', '2 files', '1 window')
    """
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1] + 'ies' if word.endswith('y') and word[-2:-1] not in 'aeiou' else word + 's'}"


def _clock(secs: float) -> str:
    secs = int(secs)
    h, rest = divmod(secs, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60:02d}:{rest % 60:02d}"


class RunProgress:
    """One progress bar for a whole run on stderr: files done of the total, windows encoded so far,
    elapsed time and time left. Library bars (sentence-transformers' per-batch bars) are never shown.

    On a terminal (a pseudo-terminal included) it redraws in place a few times a second; when
    stderr is not a terminal it writes a whole plain line (ending in a newline, never a ``\\r``
    fragment, so an error line after it starts a line of its own: D14) at the start, at most every
    30 s, and at the end, with the time left (``[elapsed<left]``, from the share of the work done;
    ``?`` before any) and no final line that repeats the one before it. ``enabled=False``
    (``--no-progress``) shows nothing. Messages printed through :meth:`write` appear above the bar,
    made :func:`printable`. ``unit`` names what is counted (``file``; ``trajectory`` for
    ``compare``, ``step`` for ``determinism probe``, ``budget`` for ``cct thm3``); trajectories are
    counted beside files only when the unit is ``file``. A file that holds several trajectories
    (LoCoMo) says how many of them are done (:meth:`expect`), and the time left counts them.
    ``windows`` never falls behind ``encoded``: the windows of the trajectory being encoded count as
    they pass through the encoder (issue 35 §5)."""

    PLAIN_INTERVAL_S = 30.0

    def __init__(self, total_files: int, *, enabled: bool = True, desc: str = "lam-ref", unit: str = "file") -> None:
        import time

        self.windows = 0
        self.trajectories = 0
        self.encoded = 0
        self._inflight = 0  # windows encoded in the trajectory not finished yet
        self._bar = None
        self._plain = False
        self._total = total_files
        self._done = 0
        self._sub_total = 0  # trajectories of the file being read (LoCoMo holds several)
        self._sub_done = 0
        self._desc = desc
        self._unit = unit
        self._shown: str | None = None
        self._start = self._last = time.monotonic()
        if enabled and total_files > 0:
            tty = bool(getattr(sys.stderr, "isatty", lambda: False)())
            if not tty:
                self._plain = True
                self._line()
                return
            from tqdm import tqdm

            try:  # a pseudo-terminal without a window size reports 0 x 0: tqdm would then draw nothing
                size = os.get_terminal_size(sys.stderr.fileno())
            except (OSError, ValueError, AttributeError):
                size = None
            dynamic = size is not None and size.columns >= 20
            rows = size.lines if size is not None and size.lines > 0 else 24
            units = plural(2, unit).split(" ", 1)[1]
            self._bar = tqdm(total=total_files, unit=unit, desc=desc, file=sys.stderr, dynamic_ncols=dynamic,
                             ncols=None if dynamic else 100, nrows=rows, mininterval=0.2, leave=True,
                             bar_format="{desc}: {n_fmt}/{total_fmt} " + units + " |{bar}| [{elapsed}<{remaining}]{postfix}")
            self._bar.set_postfix_str(self._counts(), refresh=False)

    def _fraction(self) -> float:
        sub = self._sub_done / self._sub_total if self._sub_total else 0.0
        return min(1.0, (self._done + min(sub, 1.0)) / self._total) if self._total else 1.0

    def _line(self, final: bool = False) -> None:
        import time

        now = time.monotonic()
        within = (f" ({self._sub_done}/{plural(self._sub_total, 'trajectory')} of this file)"
                  if self._sub_total > 1 and self._sub_done < self._sub_total else "")
        text = (f"{self._desc}: {self._done}/{self._total} {plural(2, self._unit).split(' ', 1)[1]}"
                f"{within} | {self._counts()}")
        if final and text == self._shown:
            return  # the last line already said it
        self._last, self._shown = now, text
        elapsed = now - self._start
        f = self._fraction()
        left = "00:00" if f >= 1.0 else ("?" if f <= 0.0 else _clock(elapsed * (1.0 - f) / f))
        print(f"{text} [{_clock(elapsed)}<{left}]", file=sys.stderr, flush=True)

    def _counts(self) -> str:
        parts = [plural(self.windows + self._inflight, "window")]
        if self._unit == "file":
            parts.append(plural(self.trajectories, "trajectory"))
        if self.encoded:
            parts.append(f"{self.encoded} encoded")
        return ", ".join(parts)

    def expect(self, trajectories: int) -> None:
        """The file being read holds ``trajectories`` trajectories (shown while it is read)."""
        self._sub_total, self._sub_done = trajectories, 0

    def advance(self, files: int = 1, windows: int = 0, trajectories: int = 0) -> None:
        """``files`` more files done, having had ``windows`` windows and ``trajectories`` trajectories."""
        import time

        self.windows += windows
        self.trajectories += trajectories
        self._inflight = 0
        self._done += files
        self._sub_total = self._sub_done = 0
        if self._bar is not None:
            self._bar.set_postfix_str(self._counts(), refresh=False)
            self._bar.update(files)
        elif self._plain and time.monotonic() - self._last >= self.PLAIN_INTERVAL_S:
            self._line()

    def note(self, windows: int = 0, trajectories: int = 0) -> None:
        """Windows and trajectories done inside a file that is not finished yet (LoCoMo holds several)."""
        import time

        self.windows += windows
        self.trajectories += trajectories
        self._sub_done += trajectories
        self._inflight = 0
        if self._bar is not None:
            within = (f", {self._sub_done}/{self._sub_total} in this file"
                      if 1 < self._sub_total and self._sub_done < self._sub_total else "")
            self._bar.set_postfix_str(self._counts() + within, refresh=False)
        elif self._plain and trajectories and time.monotonic() - self._last >= self.PLAIN_INTERVAL_S:
            self._line()

    def encoding(self, windows: int) -> None:
        """``windows`` more windows through the encoder (called per batch, :meth:`Encoder.encode`'s
        ``on_batch``): the bar moves during a long encoding inside one file (issue 23 §6), redrawn at
        most 5 times a second on a terminal and every 30 s as a whole line otherwise."""
        import time

        self.encoded += windows
        self._inflight += windows
        now = time.monotonic()
        if self._bar is not None:
            self._bar.set_postfix_str(self._counts(), refresh=False)
            if now - self._last >= 0.2:
                self._last = now
                self._bar.refresh()
        elif self._plain and now - self._last >= self.PLAIN_INTERVAL_S:
            self._line()

    def write(self, line: str) -> None:
        """Print one line on stderr without breaking the bar (made :func:`printable`)."""
        line = printable(line)
        if self._bar is not None:
            self._bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if self._plain:
            self._plain = False
            self._line(final=True)


def load_embeddings(path: str, name: str = "embeddings") -> np.ndarray:
    """Load an ``.npy`` (or the first array of an ``.npz``) file; errors name the path."""
    p = Path(path)
    if not p.exists():
        raise LamValueError(f"{name} path {path!r} does not exist")
    try:
        arr = np.load(p, allow_pickle=False)
    except Exception as exc:
        raise LamValueError(f"{name} path {path!r} is not a readable .npy/.npz file: {exc}") from exc
    if isinstance(arr, np.lib.npyio.NpzFile):
        keys = list(arr.keys())
        if not keys:
            raise LamValueError(f"{name} path {path!r} is an empty .npz")
        arr = arr[keys[0]]
    return arr


def planned_trajectories(files: list[tuple[Path, str]], fmt: str | None, command: str, failures: list,
                         progress: RunProgress, *, show_warnings: bool = True) -> Iterator:
    """Trajectories of the files found by :func:`plan_trajectory_files`, one file at a time. A file
    that fails to load is reported in one line ``lam-ref COMMAND: failed: FILE: problem`` and appended
    to ``failures``; the rest go on. The caller reports windows through ``progress.note``; the
    bar advances by one file after each file's last trajectory."""
    from ..text.loaders import LoadFailure, MalformedEvidenceWarning, load_file
    from ..text.records import TrajectoryFormatError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MalformedEvidenceWarning)
        for path, tid in files:
            try:
                trajs = load_file(path, fmt, traj_id=tid)
            except TrajectoryFormatError as exc:
                failures.append(LoadFailure(exc))
                progress.write(f"lam-ref {command}: failed: {exc}")
                progress.advance(1)
                continue
            progress.expect(len(trajs))
            for item in trajs:
                if show_warnings:
                    for w in item.warnings:
                        progress.write(f"lam-ref {command}: warning: {w}")
                yield item
            progress.advance(1)


def loaded_trajectories(paths: list[str], fmt: str | None, command: str, failures: list, *, show_warnings: bool = True) -> Iterator:
    """Trajectories of ``paths`` one at a time (streaming); each file that fails to load is reported
    on stderr as ``lam-ref COMMAND: failed: ...`` and appended to ``failures``, and the rest go on."""
    from ..text.loaders import LoadFailure, MalformedEvidenceWarning, iter_trajectories

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MalformedEvidenceWarning)
        for item in iter_trajectories(paths, fmt):
            if isinstance(item, LoadFailure):
                failures.append(item)
                print(f"lam-ref {command}: failed: {printable(item.error)}", file=sys.stderr)
                continue
            if show_warnings:
                for w in item.warnings:
                    print(f"lam-ref {command}: warning: {printable(w)}", file=sys.stderr)
            yield item


def embeddings_ids_path(path: str | Path) -> Path:
    """``OUT.ids.json`` for ``OUT.npy``: where :class:`EmbeddingSaver` writes the row ids (and
    ``verify`` reads them)."""
    path = Path(path)
    name = path.name[:-4] if path.name.endswith(".npy") else path.name
    return path.with_name(name + ".ids.json")


class EmbeddingSaver:
    """``--save-embeddings OUT.npy``: the encoded windows of every trajectory in corpus order, as one
    float32 ``.npy`` (rows = global window ids), and ``OUT.ids.json`` beside it naming each row's
    trajectory, window id within the trajectory, record index and turn. Both written atomically."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.blocks: list[np.ndarray] = []
        self.ids: list[list[Any]] = []

    @property
    def ids_path(self) -> Path:
        return embeddings_ids_path(self.path)

    def add(self, traj_id: str, encoded: Any) -> None:
        """``encoded``: a :class:`lam_ref.text.pipeline.Encoded` (its chunks and embeddings)."""
        e = np.asarray(encoded.embeddings, dtype=np.float32)
        if e.shape[0] == 0:
            return
        self.blocks.append(e)
        self.ids.extend([traj_id, int(c.id), int(c.record), int(c.turn)] for c in encoded.chunks)

    def array(self) -> np.ndarray:
        if not self.blocks:
            return np.zeros((0, 0), dtype=np.float32)
        return np.concatenate(self.blocks, axis=0)

    def save(self) -> None:
        arr = self.array()
        atomic_write(self.path, lambda fh: np.save(fh, arr, allow_pickle=False))
        obj = {"columns": ["trajectory", "window", "record", "turn"], "rows": self.ids}
        text = json.dumps(obj, ensure_ascii=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # an id with a lone surrogate (a non-UTF-8 file name): ASCII escapes
            text = json.dumps(obj)
        atomic_write_text(self.ids_path, text + "\n")

    def describe(self) -> dict[str, Any]:
        arr_rows = sum(b.shape[0] for b in self.blocks)
        dim = self.blocks[0].shape[1] if self.blocks else 0
        return {"path": str(self.path), "ids": str(self.ids_path), "rows": arr_rows, "dim": dim}
