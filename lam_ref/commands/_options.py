"""The options every ``lam-ref`` subcommand declares the same way, declared once here, and the
:class:`~lam_ref.text.pipeline.CompactionConfig` a run's options give (issue 23 §2, issue 35 §2).

:func:`add_trajectory_run_options` is the one declaration of a run that encodes trajectories
(``compact``, ``compare``, ``sweep``, ``pairs``, ``verify``, ``determinism probe``/``matrix``, and
their Dask paths): the encoder and its backend, batch size and device, the windows (``--window``,
``--window-fit``), L1's driver and candidate search, L0's stub rule, reuse, the loader and the
progress bar. :func:`compaction_config` builds the run's one ``CompactionConfig`` from them, so the
same options give the same windows and decisions in every command (docs/cli.md, "Options every
trajectory command takes").

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
from typing import Any

from ..geometry import LamValueError
from ._paths import reads, writes

#: The options :func:`add_trajectory_run_options` declares, by flag (``tests/test_cli_options.py``
#: drives every trajectory command's parser from this table).
TRAJECTORY_RUN_OPTIONS = ("--encoder", "--encoder-backend", "--batch-size", "--device", "--window", "--window-fit",
                          "--driver", "--exhaustive", "--l0-stubs", "--no-reuse", "--format", "--no-progress")
#: The on-disk embedding cache's options: in every trajectory command but the ones that measure the
#: encoder (``measures_encoder=True``: ``determinism probe``/``matrix``).
EMBEDDING_CACHE_OPTIONS = ("--embedding-cache", "--embedding-cache-max-mb")


def add_trajectory_run_options(p: argparse.ArgumentParser, *, batch_size: bool = True, device: bool = True,
                               measures_encoder: bool = False) -> None:
    """Declare the options of a run that encodes trajectories (:data:`TRAJECTORY_RUN_OPTIONS`):
    ``--encoder``, ``--encoder-backend``, ``--batch-size`` (``batch_size=False``: the command
    declares its own batch sizes, as ``determinism probe`` does), ``--device`` (``device=False``: the
    command declares its own default), the layer options (``--window``, ``--window-fit``,
    ``--driver``, ``--exhaustive``, ``--l0-stubs``, ``--no-reuse``), ``--format`` and
    ``--no-progress``, and the on-disk ``--embedding-cache`` (:func:`run_encoder` loads the encoder
    with it). ``measures_encoder=True`` (``determinism probe``/``matrix``, which measure a named
    backend's own embeddings): ``--encoder-backend`` defaults to torch, offers no ``auto``, and there
    is no embedding cache. :func:`compaction_config` turns them into the run's ``CompactionConfig``."""
    add_encoder(p, batch_size=batch_size, auto=not measures_encoder)
    if not measures_encoder:
        add_embedding_cache(p)
    if device:
        add_device(p)
    _add_layer_options(p)
    add_format(p)
    add_progress(p)


def add_json(p: argparse.ArgumentParser, what: str = "the report") -> None:
    """``--json OUT``: machine-readable output (``-`` for stdout; the table then goes to stderr)."""
    writes(p.add_argument("--json", metavar="OUT", help=f"write {what} as JSON (- for stdout)"))


def add_threshold(p: argparse.ArgumentParser, *, many: bool = False, default: Any = 0.95) -> None:
    """``--threshold/-t``: the cosine merge threshold t in [-1, 1] (``many``: several)."""
    if many:
        p.add_argument("--threshold", "-t", type=float, nargs="+", default=default, help="cosine thresholds t in [-1, 1]")
    else:
        p.add_argument("--threshold", "-t", type=float, default=default,
                       help=f"cosine merge threshold t in [-1, 1] (default {default})")


def add_encoder(p: argparse.ArgumentParser, *, default: str | None = None, batch_size: bool = True,
                auto: bool = True) -> None:
    """``--encoder``, ``--batch-size`` (unless ``batch_size=False``) and ``--encoder-backend``: the
    sentence-transformers model, its batch size and how it runs."""
    from ..text.encoders import DEFAULT_BATCH_SIZE, DEFAULT_ENCODER

    reads(p.add_argument("--encoder", default=default or DEFAULT_ENCODER,
                         help=f"sentence-transformers name or local path, or 'hash' (tests only); "
                              f"default {DEFAULT_ENCODER}"), "name-or-path")
    if batch_size:
        p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE,
                       help=f"encoding batch size (default {DEFAULT_BATCH_SIZE})")
    add_encoder_backend(p, auto=auto)


def add_encoder_backend(p: argparse.ArgumentParser, *, auto: bool = True) -> None:
    """``--encoder-backend``: how the model runs, ``auto`` (the default: the fastest installed
    certified backend passing the start-up self-check) or one of the registered backends (SPEC
    §4.5; :mod:`lam_ref.text.backends`). ``auto=False``: the registered ones only, default torch."""
    from ..text.backends import AUTO, BACKENDS, DEFAULT_BACKEND, cli_help

    if auto:
        p.add_argument("--encoder-backend", choices=(AUTO, *BACKENDS), default=AUTO, help=cli_help())
    else:
        p.add_argument("--encoder-backend", choices=BACKENDS, default=DEFAULT_BACKEND,
                       help=cli_help().replace(f"; default {AUTO}", f"; default {DEFAULT_BACKEND} (no {AUTO}: "
                                                                      "this command measures the backend it names)"))


def add_embedding_cache(p: argparse.ArgumentParser) -> None:
    """``--embedding-cache DIR`` (default ``$LAM_REF_EMBEDDING_CACHE``) and ``--embedding-cache-max-mb``:
    the opt-in on-disk cache of window embeddings shared by runs (SPEC §4.6). A folder that cannot be
    written is a usage error while parsing (exit 2, before any work)."""
    import os

    from ..text.embedding_cache import DEFAULT_MAX_BYTES, ENV

    writes(p.add_argument("--embedding-cache", metavar="DIR", type=_cache_dir_value, default=os.environ.get(ENV) or None,
                          help=f"keep window embeddings in DIR and reuse them in later runs (keyed by the encoder's "
                               f"weights digest, backend, precision and the text's digest; spec §4.6); default ${ENV}, "
                               "else none"), "folder")  # written into: never an input, nor inside an input folder
    p.add_argument("--embedding-cache-max-mb", metavar="MB", type=_int_at_least_one,
                   default=DEFAULT_MAX_BYTES >> 20,
                   help=f"bound on the cache's size; the least recently used entries are deleted past it "
                        f"(default {DEFAULT_MAX_BYTES >> 20})")


def _cache_dir_value(text: str) -> str:
    from ..text.embedding_cache import check_cache_dir

    try:
        check_cache_dir(text)
    except LamValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def run_encoder(args: argparse.Namespace) -> Any:
    """The run's encoder (:func:`~lam_ref.text.encoders.get_encoder` of ``--encoder``, ``--device``,
    ``--encoder-backend``), read through the on-disk cache when ``--embedding-cache`` is given."""
    from ..text.encoders import get_encoder

    encoder = get_encoder(args.encoder, getattr(args, "device", None), args.encoder_backend)
    folder = getattr(args, "embedding_cache", None)
    if not folder:
        return encoder
    from ..text.embedding_cache import DiskCachedEncoder, EmbeddingCache

    return DiskCachedEncoder(encoder, EmbeddingCache(folder, max_bytes=args.embedding_cache_max_mb << 20))


def add_device(p: argparse.ArgumentParser) -> None:
    """``--device``: the encoder's device (default: the library's choice)."""
    p.add_argument("--device", help="encoder device (cpu, cuda, ...; default: the library's choice)")


def add_window(p: argparse.ArgumentParser) -> None:
    """``--window``: the window size in cl100k tokens (SPEC §3)."""
    from ..text.chunking import DEFAULT_WINDOW

    p.add_argument("--window", type=_int_at_least_one, default=DEFAULT_WINDOW,
                   help=f"window size in cl100k tokens, >= 1 (default {DEFAULT_WINDOW})")


def _int_at_least_one(text: str) -> int:
    """``--window``, ``--embedding-cache-max-mb``: an integer >= 1, checked while parsing (a usage
    error, exit 2, before any model loads: D15)."""
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


def _add_layer_options(p: argparse.ArgumentParser) -> None:
    """The options of LAM's layers, part of :func:`add_trajectory_run_options` (one
    :class:`~lam_ref.text.pipeline.CompactionConfig`, built by :func:`compaction_config`; issue 23 §2,
    issue 35 §2): ``--window``, ``--window-fit``, ``--driver``, ``--exhaustive``, ``--l0-stubs``,
    ``--no-reuse``."""
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
    (:func:`add_trajectory_run_options`), with ``settings`` (threshold, layers, ...) on top;
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


def add_reuse(p: argparse.ArgumentParser) -> None:
    """``--no-reuse``: encode every window, even one whose text the run already encoded (SPEC §4.4)."""
    p.add_argument("--no-reuse", action="store_true",
                   help="encode every window again, even when the run already encoded its exact text (default: "
                        "each distinct window text is encoded once per run, keyed by its digest; spec §4.4)")


def add_format(p: argparse.ArgumentParser) -> None:
    """``--format``: the trajectory loader (default: detected per file)."""
    from ..text.loaders import FORMATS

    p.add_argument("--format", choices=FORMATS, help="trajectory loader (default: detect per file)")


def add_progress(p: argparse.ArgumentParser) -> None:
    """``--no-progress``: no overall progress bar on stderr."""
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def add_mkdir(p: argparse.ArgumentParser) -> None:
    """``--mkdir``: create missing output folders (never done otherwise)."""
    p.add_argument("--mkdir", action="store_true", help="create missing output folders (default: a missing folder is an error)")


def add_gold(p: argparse.ArgumentParser) -> None:
    """``--gold PATCHES``: gold patches, whose added lines are the evidence (App. F.3; the formats
    of :func:`lam_ref.evidence.load_gold`)."""
    reads(p.add_argument("--gold", metavar="PATCHES",
                         help="gold patches: JSON {id: patch}, JSON/JSONL records {instance_id, patch}, or a directory"),
          "file-or-folder")


def add_save_embeddings(p: argparse.ArgumentParser) -> None:
    """``--save-embeddings OUT.npy``: the encoded windows of every trajectory, in corpus order."""
    from ._embeddings import embeddings_ids_path

    writes(p.add_argument("--save-embeddings", metavar="OUT.npy",
                          help="save the window embeddings (float32, corpus order; ids in OUT.ids.json) as .npy"),
           also=lambda out: [str(embeddings_ids_path(out))])


def validate_batch_size(value: Any, name: str = "--batch-size") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise LamValueError(f"{name} must be an integer >= 1, got {value!r}")
    return value
