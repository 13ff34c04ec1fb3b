"""The HTTP service (extra ``sciera[server]``): search, rerank, ask and verify over served corpora,
experiment reports, an API key, and one shared LLM behind a bounded queue.

``create_app`` builds the FastAPI app; ``sciera serve`` runs it with uvicorn.
"""

from sciera.serve.app import create_app

__all__ = ["create_app"]
