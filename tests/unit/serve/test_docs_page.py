"""The API docs and the web page work offline: every file they load is served locally."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from sciera.serve.app import STATIC_DIR


def test_docs_load_swagger_ui_from_this_server(client):
    page = client.get("/docs")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assets = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert "docs-static/swagger-ui-bundle.js" in assets
    assert not [a for a in assets if a.startswith(("http:", "https:", "//"))], assets
    for asset in assets:
        assert client.get("/" + asset).status_code == 200, asset
    assert client.get("/openapi.json").json()["info"]["title"] == "sciera"


def test_web_page_and_its_files_are_local(make_app):
    client = TestClient(make_app(static_dir=STATIC_DIR))
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assets = re.findall(r'(?:src|href)="([^"#]+)"', page.text)
    assert sorted(assets) == ["static/app.js", "static/style.css"]
    for asset in assets:
        assert client.get("/" + asset).status_code == 200, asset
    # the script never hands server data to the HTML parser
    script = client.get("/static/app.js").text
    assert "innerHTML" not in script.replace("never through innerHTML", "")
    assert "insertAdjacentHTML" not in script and "document.write" not in script
