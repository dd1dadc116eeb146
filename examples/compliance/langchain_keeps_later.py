"""langchain-community EmbeddingsRedundantFilter: of two near-duplicate documents it drops the
EARLIER one and keeps the later (its comment says "dropping the second document of any highly
similar pair", but the pair is taken from the lower triangle as (later, earlier)). The greedy rule
keeps the first arrival, and its decision on a document never depends on later ones (the prefix
property): here "first" is kept alone but dropped once "second" arrives.

Standalone: imports only langchain-community / langchain-core. Exit 0 when reproduced.
"""

import sys

from langchain_community.document_transformers import EmbeddingsRedundantFilter
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings


class Fixed(Embeddings):
    """Two fixed unit vectors at cosine 0.995: near duplicates."""

    VECTORS = {"first": [1.0, 0.0], "second": [0.995, 0.0998749217771909]}

    def embed_documents(self, texts):
        return [self.VECTORS[t] for t in texts]

    def embed_query(self, text):
        return self.VECTORS[text]


flt = EmbeddingsRedundantFilter(embeddings=Fixed(), similarity_threshold=0.95)
alone = [d.page_content for d in flt.transform_documents([Document(page_content="first")])]
kept = [d.page_content for d in flt.transform_documents([Document(page_content="first"), Document(page_content="second")])]
print(f"alone: kept {alone}; with the second document: kept {kept} (the greedy rule keeps ['first'] in both)")
if alone == ["first"] and kept == ["second"]:
    print("REPRODUCED: the later duplicate is kept, the earlier dropped; the decision on 'first' depends on a later "
          "document (prefix property)")
    sys.exit(0)
print("NOT REPRODUCED")
sys.exit(1)
