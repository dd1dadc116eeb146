"""Per-file tasks over a corpus: compaction of each trajectory (per-trajectory scope), its
encoding into an embedding shard (corpus scope), or its contribution to a threshold sweep, with
atomic outputs and ``--resume``.

Each task runs the unchanged serial code (:func:`lam_ref.text.loaders.load_file`,
:func:`lam_ref.text.pipeline.compact_trajectory` / :func:`~lam_ref.text.pipeline.encode_chunks` /
:func:`lam_ref.sweep.measure_trajectory`, whose task is :func:`lam_ref.sweep.sweep_file`) on one input
file and writes ``files/<index>.json`` (and, for the corpus scope, the file's embedding shard) into the run folder by temporary file + rename: a task that is retried after a
lost worker overwrites an identical file, and a resumed run skips every file whose output exists.
The encoder is loaded once per worker process (``get_encoder`` is cached per process).

Digests (SPEC §10 encoding, our convention): a file's digest is :func:`lam_ref.digest.digest_lines`
over one line per trajectory (id, chunk and token counts, ``δ̂`` to 17 digits, deletion and map
digests) and one line per failure; the corpus digest is :func:`~lam_ref.digest.digest_lines` over
the file digests in input order. Both are computed the same way from a serial run's report
(:func:`digests_from_report`), so a distributed run can be checked against it.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

from .. import digest as _digest
from .._io import atomic_write_text, load_npy
from ..geometry import LamValueError

__all__ = [
    "validate_resume_dir",
    "compact_file",
    "corpus_digest",
    "digests_from_report",
    "encode_file",
    "file_digest",
    "input_files",
    "load_for_task",
    "read_file_output",
    "residual_file",
    "stage_dir",
    "staged_problem",
    "write_file_output",
]

SETTINGS_FILE = "settings.json"
FORMAT_VERSION = 1


def input_files(paths: list[str], fmt: str | None) -> tuple[list[tuple[str, str]], list[dict[str, str]]]:
    """The input files in the serial command's order (arguments in order, folders sorted) with
    their trajectory ids, and the path arguments that failed (missing, empty folder)."""
    from ..text.loaders import LoadFailure, iter_trajectory_files

    files, failures = [], []
    for item in iter_trajectory_files(paths, fmt):
        if isinstance(item, LoadFailure):
            failures.append(item.to_json())
        else:
            files.append((str(item[0]), item[1]))
    return files, failures


def file_digest(summaries: list[dict[str, Any]], failures: list[dict[str, str]]) -> str:
    """Digest of one input file's outcome (its trajectories in order, then its failures)."""
    lines = [
        "\t".join(str(x) for x in (s["id"], s["chunks"], s["kept_chunks"], s["tokens_original"],
                                   s["tokens_residual_net"], s["tokens_residual_gross"], s["delta_hat_17g"],
                                   s["deletion_digest"], s["map_digest"]))
        for s in summaries
    ]
    lines += [f"failed\t{f['error']}" for f in failures]
    return _digest.digest_lines(lines)


def corpus_digest(file_digests: list[str]) -> str:
    """Digest over the per-file digests in input order."""
    return _digest.digest_lines(file_digests)


def digests_from_report(report: dict[str, Any], files: list[str]) -> tuple[list[str], str]:
    """Per-file and corpus digests of a serial ``lam-ref compact --json`` report for the input
    ``files`` (in order; a path may repeat): the report lists trajectories and failures in input
    order, so each file takes the next run of entries with its ``path`` (distinct ids within one
    file, as a file's trajectories have)."""
    trajs, fails = report["trajectories"], report["failures"]
    tp = fp = 0
    out = []
    for f in files:
        summ: list[dict[str, Any]] = []
        while tp < len(trajs) and trajs[tp]["path"] == f and all(s["id"] != trajs[tp]["id"] for s in summ):
            summ.append(trajs[tp])
            tp += 1
        fail: list[dict[str, str]] = []
        while fp < len(fails) and fails[fp]["path"] == f and all(x["error"] != fails[fp]["error"] for x in fail):
            fail.append(fails[fp])
            fp += 1
        out.append(file_digest(summ, fail))
    return out, corpus_digest(out)


def failure_record(path: str, problem: str) -> dict[str, str]:
    """The failure record (``LoadFailure.to_json``) of ``path`` with ``problem``, as the serial command reports it."""
    from ..text.loaders import LoadFailure
    from ..text.records import TrajectoryFormatError

    return LoadFailure(TrajectoryFormatError(path, "$", problem)).to_json()


def load_for_task(path: str, tid: str, fmt: str | None) -> tuple[list[Any], list[dict[str, str]]]:
    """The trajectories of one input file with the serial loader, and its load failures (as JSON)."""
    from ..text.loaders import LoadFailure, MalformedEvidenceWarning, load_file
    from ..text.records import TrajectoryFormatError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MalformedEvidenceWarning)
        try:
            return load_file(path, fmt, traj_id=tid), []
        except TrajectoryFormatError as exc:
            return [], [LoadFailure(exc).to_json()]
        except OSError as exc:  # a file that vanished or became unreadable between listing and loading
            return [], [failure_record(path, f"cannot be read: {exc.strerror or exc}")]


def _output(run_dir: str, index: int, kind: str = "files") -> Path:
    return Path(run_dir) / kind / f"{index:07d}.json"


def write_file_output(run_dir: str, record: dict[str, Any], kind: str = "files") -> None:
    """Write one file's output (``record["index"]``, ``record["path"]`` and the task's data) to
    ``<kind>/<index>.json`` by temporary file + rename (a retried task writes the same bytes);
    ``kind`` names the pass (``files``; ``residuals`` for the corpus scope's second pass). The
    record carries the SHA-256 of everything else in it (``sha256``), so a resumed run refuses a
    record edited afterwards (issue 39 §4: a resumed report is built from these records)."""
    body = {k: v for k, v in record.items() if k != "sha256"}
    atomic_write_text(_output(run_dir, record["index"], kind), json.dumps({**body, "sha256": _record_sha(body)}))


def _record_sha(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode("utf-8")).hexdigest()


STAGE_DIR = "stage"
STAGE_SUMS = "stage_xxh3_128"  # a record's key: {staged file name: XXH3-128 when it was written}


def stage_dir(run_dir: str, index: int) -> Path:
    """Where file ``index``'s tasks stage its residual and audit files for the driver to name."""
    return Path(run_dir) / STAGE_DIR / f"{index:07d}"


def _stage_residual(run_dir: str, index: int, k: int, res: Any, check: bool, sums: dict[str, str]) -> list[str]:
    """Write trajectory ``k`` of file ``index``'s residual and audit store under ``stage/<index>/``
    (named by the driver later) and record their XXH3-128 in ``sums`` (the task's record carries
    them: :func:`staged_problem`); with ``check``, the problems found reading them back."""
    from ..text.residuals import ResidualWriter, written_problems
    from .shards import checksum_file

    stage = stage_dir(run_dir, index)
    stage.mkdir(parents=True, exist_ok=True)
    rpath, apath = ResidualWriter(stage).write(res, name=str(k))
    sums.update({p.name: checksum_file(p) for p in (rpath, apath)})
    return written_problems(apath, res) if check else []


def staged_problem(run_dir: str, index: int, record: dict[str, Any]) -> str | None:
    """Why the staged residual and audit files of file ``index`` are not the ones its ``record`` was
    written with (issue 39 §4: the driver copies them into ``--residual-dir``), naming the first such
    file, or ``None``. A record that staged files without recording their checksums (a run folder
    of an older lam-ref) has a problem too: its files are never trusted."""
    from ..text.residuals import AUDIT_SUFFIX, RESIDUAL_SUFFIX
    from .shards import file_problem

    sums = record.get(STAGE_SUMS, {})
    stage = stage_dir(run_dir, index)
    for j in record.get("staged", []):
        for name in (f"{j}{RESIDUAL_SUFFIX}", f"{j}{AUDIT_SUFFIX}"):
            if name not in sums:
                return f"staged file {str(stage / name)!r} has no recorded checksum"
    for name, expected in sums.items():
        problem = file_problem(stage / name, expected)
        if problem is not None:
            return f"staged file {str(stage / name)!r} {problem}"
    return None


def compact_file(index: int, path: str, tid: str, fmt: str | None, encoder_name: str, device: str | None,
                 config: Any, run_dir: str, check: bool, residuals: bool, backend: str = "torch") -> dict[str, Any]:
    """Compact every trajectory of one file with the serial pipeline; write its output atomically.

    A trajectory whose compaction raises is that file's failure (as in the serial command); the
    residual and audit files (``residuals=True``) are staged under ``stage/<index>/`` and moved
    to their final names (which depend on all ids before them) by the driver.
    """
    from ..text.encoders import get_encoder
    from ..text.pipeline import compact_trajectory, result_summary
    from ..text.residuals import result_problems
    from ..text.reuse import EncodingCache

    trajs, failures = load_for_task(path, tid, fmt)
    encoder = get_encoder(encoder_name, device, backend) if trajs and config.uses_encoder else None
    summaries, problems, staged, sums = [], [], [], {}
    reuse = EncodingCache(enabled=config.reuse)  # workers share nothing: reuse within the file (SPEC §4.4)
    for k, traj in enumerate(trajs):
        try:
            res = compact_trajectory(traj, encoder, config, reuse=reuse)
        except Exception as exc:  # noqa: BLE001 - one trajectory must not sink a batch (as serial)
            failures.append(failure_record(traj.path, f"compaction failed: {type(exc).__name__}: {exc}"))
            continue
        if check:
            problems.extend(result_problems(res))
        if residuals:
            problems.extend(_stage_residual(run_dir, index, k, res, check, sums))
            staged.append(k)
        summaries.append(result_summary(res))
    record = {"index": index, "path": path, "summaries": summaries, "failures": failures, "problems": problems,
              "staged": staged, STAGE_SUMS: sums, "digest": file_digest(summaries, failures)}
    write_file_output(run_dir, record)
    return {"index": index, "digest": record["digest"], "trajectories": len(summaries), "failed": len(failures),
            "pid": os.getpid()}


def encode_file(index: int, path: str, tid: str, fmt: str | None, encoder_name: str, device: str | None,
                config: Any, run_dir: str, backend: str = "torch") -> dict[str, Any]:
    """Encode the observation windows of every trajectory of one file (SPEC §3, §4: the windows
    L1 sees, in arrival order) into one shard ``shards/<index>.npy``; write ``files/<index>.json``."""
    import numpy as np

    from ..text.chunking import get_tokenizer
    from ..text.encoders import get_encoder
    from ..text.pipeline import encode_chunks
    from ..text.reuse import EncodingCache
    from .shards import write_shard

    trajs, failures = load_for_task(path, tid, fmt)
    encoder = get_encoder(encoder_name, device, backend)
    tok = get_tokenizer(config.tokenizer)
    blocks, entries = [], []
    reuse = EncodingCache(enabled=config.reuse)  # workers share nothing: reuse within the file (SPEC §4.4)
    for traj in trajs:
        items = [(i, traj.records[i].turn, traj.records[i].text) for i in traj.observation_indices]
        try:
            enc = encode_chunks(items, encoder, tok, window=config.window, batch_size=config.batch_size,
                                fit=config.fit_window, reuse=reuse)
        except Exception as exc:  # noqa: BLE001
            failures.append(failure_record(traj.path, f"encoding failed: {type(exc).__name__}: {exc}"))
            continue
        blocks.append(enc.embeddings)
        entries.append({"id": traj.id, "path": traj.path, "chunks": int(enc.embeddings.shape[0]),
                        "truncated": enc.truncated, "encoded": enc.encoded, "reused": enc.reused,
                        "tokens": int(sum(c.tokens for c in enc.chunks))})
    emb = np.concatenate(blocks) if blocks else np.zeros((0, encoder.dim), np.float32)
    shard = write_shard(Path(run_dir) / "shards" / f"{index:07d}.npy", emb)
    record = {"index": index, "path": path, "trajectories": entries, "failures": failures, "shard": shard,
              "dim": encoder.dim, "encoder": encoder.describe()}
    write_file_output(run_dir, record)
    return {"index": index, "rows": shard["rows"], "failed": len(failures), "pid": os.getpid()}


MAP_DIR = "map"


def map_file(run_dir: str, name: str, map_sums: dict[str, str]) -> Any:
    """``map/<name>.npy`` memory-mapped, after checking it is the file the driver wrote in this run
    (its XXH3-128 in ``map_sums``; :func:`lam_ref.distributed.shards.check_file`)."""
    from .shards import check_file

    p = Path(run_dir) / MAP_DIR / f"{name}.npy"
    check_file(p, map_sums[name], "corpus map file")
    return load_npy(p, mmap_mode="r")


def residual_file(index: int, path: str, tid: str, fmt: str | None, config: Any, run_dir: str,
                  check: bool, map_sums: dict[str, str]) -> dict[str, Any]:
    """The corpus scope's second pass over one file (``--residual-dir``): each trajectory the first
    pass encoded gets its residual and audit store from the corpus map
    (:func:`lam_ref.text.pipeline.residual_from_map`, global rows from ``map/first_rows.npy``; each
    map file checked against the XXH3-128 ``map_sums`` the driver recorded when it wrote it),
    staged under ``stage/<index>/`` for the driver to name, with their checksums in
    ``residuals/<index>.json``, written last. With ``check`` the staged files are read back and must
    restore every original record."""

    from ..text.pipeline import residual_from_map

    first = read_file_output(run_dir, index, path)
    if first is None:
        raise LamValueError(f"{path}: the encoding pass left no output in the run folder")
    pi = map_file(run_dir, "pi", map_sums)
    dist = map_file(run_dir, "distances", map_sums)
    row = int(map_file(run_dir, "first_rows", map_sums)[index])
    trajs, _ = load_for_task(path, tid, fmt)  # load failures were reported by the first pass
    encoded = list(first["trajectories"])
    from ..text.encoders import get_encoder  # the windows end at this encoder's horizon (SPEC §3.4)

    horizon = get_encoder(first["encoder"]["name"], None) if encoded and config.fit_window else None
    entries, staged, problems, failures, sums = [], [], [], [], {}
    for k, traj in enumerate(trajs):
        if not encoded or (traj.id, traj.path) != (encoded[0]["id"], encoded[0]["path"]):
            continue  # its encoding failed in the first pass (a failure there)
        want = encoded.pop(0)
        try:
            res = residual_from_map(traj, config, row, pi, dist, encoder=horizon)
            if res.chunks != want["chunks"]:
                raise LamValueError(f"{res.chunks} windows, the encoding pass had {want['chunks']}")
        except Exception as exc:  # noqa: BLE001 - one trajectory must not sink a batch
            failures.append(failure_record(traj.path, f"residual failed: {type(exc).__name__}: {exc}"))
            row += want["chunks"]
            continue
        row += res.chunks
        problems.extend(_stage_residual(run_dir, index, k, res, check, sums))
        staged.append(k)
        entries.append({"id": traj.id, "path": traj.path, "tokens_original": res.tokens_original,
                        "tokens_residual_net": res.tokens_residual_net,
                        "tokens_residual_gross": res.tokens_residual_gross, "l1_stubs": res.l1_stubs,
                        "l0_stubs": res.l0_stubs})
    write_file_output(run_dir, {"index": index, "path": path, "summaries": entries, "staged": staged,
                                STAGE_SUMS: sums, "problems": problems, "failures": failures}, kind="residuals")
    return {"index": index, "trajectories": len(entries), "pid": os.getpid()}


def read_file_output(run_dir: str, index: int, path: str, kind: str = "files") -> dict[str, Any] | None:
    """The finished output of file ``index`` in pass ``kind`` (``None`` if absent, unreadable or
    for another path)."""
    p = _output(run_dir, index, kind)
    try:
        rec = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(rec, dict) or rec.get("index") != index or rec.get("path") != path or "sha256" not in rec:
        return None  # absent, torn, another file's, or written before records carried a checksum: computed again
    if rec.pop("sha256") != _record_sha(rec):
        raise LamValueError(f"--resume {run_dir}: {kind}/{p.name} (the output of {path}) was edited after it was "
                            "written (its SHA-256 differs); remove it to compute that file again")
    return rec


def _input_stamp(path: str) -> list[Any]:
    try:
        st = os.stat(path)
        return [path, st.st_size, st.st_mtime_ns]
    except OSError:
        return [path, None, None]


def continues_run(run_dir: str | None) -> bool:
    """Whether ``--resume run_dir`` continues an earlier run (the folder holds its ``settings.json``):
    only then may the run write over the residual files already in its ``--residual-dir`` without
    ``--overwrite`` (issue 39 §4: a new run folder never silently replaces an earlier run's files)."""
    return run_dir is not None and (Path(run_dir) / SETTINGS_FILE).is_file()


def validate_resume_dir(run_dir: str, settings: dict[str, Any], files: list[tuple[str, str]]) -> None:
    """Write ``settings.json`` into a new run folder, or refuse a folder written with other settings.

    ``settings`` holds everything that decides the outputs (threshold, layers, encoder, scope, ...);
    the inputs are recorded as ``(path, size, mtime_ns)`` in order.

    Raises:
        LamValueError: one line naming the first setting (or input) that differs.
    """
    want = {"format_version": FORMAT_VERSION, **settings, "inputs": [_input_stamp(p) for p, _ in files]}
    p = Path(run_dir) / SETTINGS_FILE
    if p.exists():
        try:
            have = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise LamValueError(f"--resume {run_dir!r}: {SETTINGS_FILE} cannot be read: {exc}") from None
        if have != want:
            raise LamValueError(f"--resume {run_dir!r} was written with other settings: {_first_difference(have, want)}")
        return
    if Path(run_dir).exists() and any(Path(run_dir).iterdir()):
        raise LamValueError(f"--resume {run_dir!r} is a non-empty folder without {SETTINGS_FILE} (not a lam-ref run folder)")
    atomic_write_text(p, json.dumps(want, indent=1))


def _first_difference(have: dict[str, Any], want: dict[str, Any]) -> str:
    for key in sorted(set(have) | set(want)):
        a, b = have.get(key), want.get(key)
        if a == b:
            continue
        if key == "inputs" and isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                return f"inputs: {len(a)} files there, {len(b)} now"
            k = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
            return f"inputs: file {k} was {a[k][0]!r} (size {a[k][1]}), now {b[k][0]!r} (size {b[k][1]})"
        if isinstance(a, dict) and isinstance(b, dict):
            sub = next(k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k))
            return f"{key}.{sub} was {a.get(sub)!r}, now {b.get(sub)!r}"
        return f"{key} was {a!r}, now {b!r}"
    return "unknown difference"
