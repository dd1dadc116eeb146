"""langchain-community EmbeddingsRedundantFilter: with a negative similarity_threshold, the zeros that
np.tril writes above the diagonal (and on it) count as similarities 0 > threshold, so documents
are dropped against themselves: two opposite documents (cosine -1) at threshold -0.5 should both
be kept, yet the filter keeps at most one of them.

Standalone: imports only langchain-community / langchain-core. Exit 0 when reproduced.
"""

import sys

from langchain_community.document_transformers import EmbeddingsRedundantFilter
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings


class Fixed(Embeddings):
    VECTORS = {"a": [1.0, 0.0], "b": [-1.0, 0.0]}

    def embed_documents(self, texts):
        return [self.VECTORS[t] for t in texts]

    def embed_query(self, text):
        return self.VECTORS[text]


docs = [Document(page_content="a"), Document(page_content="b")]
kept = [d.page_content for d in EmbeddingsRedundantFilter(embeddings=Fixed(), similarity_threshold=-0.5).transform_documents(docs)]
print(f"kept {kept}; cos(a, b) = -1 < -0.5 (the rule keeps ['a', 'b'])")
if kept != ["a", "b"]:
    print("REPRODUCED: a negative threshold drops documents that are not similar to anything")
    sys.exit(0)
print("NOT REPRODUCED")
sys.exit(1)
