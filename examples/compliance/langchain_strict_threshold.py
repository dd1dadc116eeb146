"""langchain-community EmbeddingsRedundantFilter: a pair exactly AT the threshold is not redundant
(it tests similarity > threshold). LAM's rule merges at equality (sq <= 2 - 2t, i.e. cos >= t):
(1, 0) and (0, 1) at threshold 0 have cosine exactly 0.

Standalone: imports only langchain-community / langchain-core. Exit 0 when reproduced.
"""

import sys

from langchain_community.document_transformers import EmbeddingsRedundantFilter
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings


class Fixed(Embeddings):
    VECTORS = {"a": [1.0, 0.0], "b": [0.0, 1.0]}

    def embed_documents(self, texts):
        return [self.VECTORS[t] for t in texts]

    def embed_query(self, text):
        return self.VECTORS[text]


docs = [Document(page_content="a"), Document(page_content="b")]
kept = [d.page_content for d in EmbeddingsRedundantFilter(embeddings=Fixed(), similarity_threshold=0.0).transform_documents(docs)]
print(f"kept {kept} (the inclusive rule keeps ['a'])")
if kept == ["a", "b"]:
    print("REPRODUCED: strict threshold: a pair at exactly the threshold is kept apart")
    sys.exit(0)
print("NOT REPRODUCED")
sys.exit(1)
