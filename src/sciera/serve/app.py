"""The FastAPI application: ``create_app(corpora, settings, ...)``.

    from sciera.serve import create_app
    app = create_app({"scifact": Path("corpora/scifact")}, load_settings(), api_key="s3cret")
    # uvicorn.run(app)  -- what `sciera serve` does

Routes: ``GET /healthz`` (open), ``/v1/...`` (see :mod:`sciera.serve.routes`; the API key
when one is set), ``/docs`` (Swagger UI from local files: the ``fastapi-offline``
package's copy, no CDN) and ``/openapi.json``, and the web page: ``GET /``
serves ``static/index.html`` and ``/static/...`` the folder, when they exist (404 otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from fastapi import FastAPI, Security
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse
from fastapi.security import APIKeyHeader
from fastapi.staticfiles import StaticFiles

import sciera
from sciera.serve.auth import APIKeyMiddleware
from sciera.serve.body_limit import BodyLimitMiddleware
from sciera.serve.errors import NotFound, install_error_handlers
from sciera.serve.experiments import Experiments
from sciera.serve.queue import LLMGate
from sciera.serve.resources import LLMFactory, PipelineFactory, Resources
from sciera.serve.routes import api_router, experiments_router
from sciera.settings import Settings, load_settings

STATIC_DIR = Path(__file__).parent / "static"
DEFAULT_QUEUE_SIZE = 4


def create_app(
    corpora: Mapping[str, Path],
    settings: Settings | None = None,
    *,
    api_key: str | None = None,
    cors_origins: Sequence[str] = (),
    queue_size: int = DEFAULT_QUEUE_SIZE,
    experiments_dir: Path | None = None,
    llm_factory: LLMFactory | None = None,
    pipeline_factory: PipelineFactory | None = None,
    static_dir: Path = STATIC_DIR,
) -> FastAPI:
    """The app serving ``corpora`` (name -> ingested, indexed directory; the first is the
    default) with ``settings``.

    ``api_key``: required on every ``/v1`` route when given. ``cors_origins``: origins
    allowed to call the API from a browser (none: CORS off). ``queue_size``: LLM requests
    that may wait while one runs; one more gets 503. ``experiments_dir``: where
    ``/v1/experiments`` finds results directories. ``llm_factory(settings)`` builds the one
    shared LLM (default: the configured backend); ``pipeline_factory(corpus_dir, settings,
    llm)`` a corpus's pipeline (default: ``Pipeline.from_settings``).
    """
    settings = settings or load_settings()
    res = Resources(corpora, settings, llm_factory=llm_factory, pipeline_factory=pipeline_factory)
    gate = LLMGate(queue_size)
    app = FastAPI(
        title="sciera",
        version=sciera.__version__,
        description="Scientific QA over a paper corpus: search, rerank (DeepEra), ask.",
        docs_url=None,
        redoc_url=None,
    )
    _offline_docs(app)
    app.state.resources, app.state.gate = res, gate
    install_error_handlers(app)
    # the middleware checks the key; this only declares it, for /docs' "Authorize" button
    declared = [Security(APIKeyHeader(name="X-API-Key", auto_error=False))] if api_key else []
    app.include_router(api_router(res, gate), dependencies=declared)
    app.include_router(experiments_router(Experiments(experiments_dir)), dependencies=declared)

    @app.get("/healthz", tags=["health"])
    def healthz() -> dict[str, str]:
        """Liveness: no key needed, opens nothing."""
        return {"status": "ok"}

    index = static_dir / "index.html"

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        if not index.is_file():
            raise NotFound("no web page is installed; the API is under /v1 (see /docs)")
        return FileResponse(index, media_type="text/html")

    if static_dir.is_dir():
        app.mount("/static", StaticFiles(directory=static_dir), name="static")

    # the last added middleware runs first: CORS answers preflights before the key check,
    # and the key is checked before any body is read
    app.add_middleware(BodyLimitMiddleware)
    if api_key:
        app.add_middleware(APIKeyMiddleware, api_key=api_key)
    if cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "X-API-Key", "Content-Type", "Accept"],
        )
    return app


def _offline_docs(app: FastAPI) -> None:
    """``/docs``: Swagger UI served from the files the ``fastapi-offline`` package carries
    (FastAPI's default page loads them from a CDN, which fails offline)."""
    import importlib.util

    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.responses import HTMLResponse

    spec = importlib.util.find_spec("fastapi_offline")
    if spec is None or not spec.submodule_search_locations:
        return
    assets = Path(next(iter(spec.submodule_search_locations))) / "static"
    if not (assets / "swagger-ui-bundle.js").is_file():
        return
    app.mount("/docs-static", StaticFiles(directory=assets), name="docs-static")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="openapi.json",
            title="sciera API",
            swagger_js_url="docs-static/swagger-ui-bundle.js",
            swagger_css_url="docs-static/swagger-ui.css",
            swagger_favicon_url="docs-static/favicon.png",
        )
