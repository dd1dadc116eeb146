"""langchain-community EmbeddingsRedundantFilter: pairs are processed by decreasing similarity, not in
arrival order, so a document can be dropped for a partner that is itself dropped later: it then has
no kept document within the threshold at all.

Chain a ~ b ~ c (a, c far apart) with sim(a, b) > sim(b, c): (b, a) drops a, then (c, b) drops b;
only c is kept, and a is not within the threshold of c. Standalone: imports only langchain-community
/ langchain-core. Exit 0 when reproduced.
"""

import math
import sys

from langchain_community.document_transformers import EmbeddingsRedundantFilter
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings


def unit(deg):
    return [math.cos(math.radians(deg)), math.sin(math.radians(deg))]


class Fixed(Embeddings):
    VECTORS = {"a": unit(0), "b": unit(20), "c": unit(45)}  # sim(a,b)=0.940, sim(b,c)=0.906, sim(a,c)=0.707

    def embed_documents(self, texts):
        return [self.VECTORS[t] for t in texts]

    def embed_query(self, text):
        return self.VECTORS[text]


docs = [Document(page_content=k) for k in ("a", "b", "c")]
kept = [d.page_content for d in EmbeddingsRedundantFilter(embeddings=Fixed(), similarity_threshold=0.9).transform_documents(docs)]
print(f"kept {kept}; sim(a, c) = {math.cos(math.radians(45)):.3f} < 0.9 (the greedy rule keeps ['a', 'c'])")
if kept == ["c"]:
    print("REPRODUCED: 'a' was dropped but no kept document is within the threshold of it")
    sys.exit(0)
print("NOT REPRODUCED")
sys.exit(1)
