"""LAM over a corpus on Dask (``dask.distributed``): per-trajectory compaction over many files, and
the corpus-scope greedy (exact and banded), each equal to the serial run byte for byte at any
worker count (paper §2.4, Algorithm 2; SPEC §5, §10). See ``docs/scale.md``.

* :mod:`~lam_ref.distributed.cluster`: a ``LocalCluster`` (``--workers N``) or a scheduler address;
* :mod:`~lam_ref.distributed.files`: the per-file run shared by ``compact`` and ``sweep`` (input
  files, run folder, ``--resume``, one task per file), and the Dask steps of ``determinism probe``
  (their command-line side, options and drivers, is :mod:`lam_ref.commands._dask`);
* :mod:`~lam_ref.distributed.trajectories`: one task per file running the unchanged serial
  :func:`lam_ref.text.pipeline.compact_trajectory` (or encoding the file, or writing its
  corpus-scope residuals), atomic per-file outputs, ``--resume``, per-file and corpus digests;
* :mod:`~lam_ref.distributed.corpus`: compaction at corpus scope as one call
  (:func:`~lam_ref.distributed.corpus.compact_corpus`: encode each file, one greedy over all
  windows, the residuals per file);
* :mod:`~lam_ref.distributed.shards`: memory-mapped embedding shards with checksums;
* :mod:`~lam_ref.distributed.greedy`: tile pairs / band buckets → within-δ pairs → one resolve.
"""

from .cluster import ClusterSpec, cluster_client, validate_cluster_args
from .greedy import CorpusGreedyResult, corpus_greedy, resolve_edges
from .shards import ShardError, ShardSet, write_shards

__all__ = [
    "ClusterSpec",
    "CorpusGreedyResult",
    "ShardError",
    "ShardSet",
    "cluster_client",
    "corpus_greedy",
    "resolve_edges",
    "validate_cluster_args",
    "write_shards",
]
