"""A local HTTP server that answers like the Hugging Face hub, for download tests.

It serves the few routes `huggingface_hub` uses to download files: the model's metadata
(`/api/models/REPO/revision/REV`) and each file (`/REPO/resolve/REV/NAME`, HEAD and GET,
with the commit and ETag headers the client checks). Unknown repos answer 404 with the
hub's `X-Error-Code: RepoNotFound`. It listens on 127.0.0.1 only; no test reaches the
internet. `hub.requests` records every path asked for.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class FakeHub:
    def __init__(self) -> None:
        self.repos: dict[str, dict[str, bytes]] = {}
        self.requests: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_HEAD(self):
                self._answer(body=False)

            def do_GET(self):
                self._answer(body=True)

            def _answer(self, body: bool) -> None:
                path = unquote(urlsplit(self.path).path)
                hub.requests.append(f"{self.command} {path}")
                if path.startswith("/api/models/"):
                    rest = path[len("/api/models/") :]
                    repo = rest.split("/revision/")[0]
                    files = hub.repos.get(repo)
                    if files is None:
                        return self._missing("RepoNotFound")
                    siblings = [{"rfilename": n, "size": len(b)} for n, b in files.items()]
                    data = json.dumps({"id": repo, "sha": COMMIT, "siblings": siblings})
                    return self._send(200, data.encode(), body, "application/json")
                if "/resolve/" in path:
                    repo, _, tail = path.lstrip("/").partition("/resolve/")
                    name = tail.partition("/")[2]
                    files = hub.repos.get(repo)
                    if files is None:
                        return self._missing("RepoNotFound")
                    if name not in files:
                        return self._missing("EntryNotFound")
                    data = files[name]
                    start = 0
                    rng = self.headers.get("Range")
                    if rng and rng.startswith("bytes="):
                        start = int(rng[6:].split("-")[0] or 0)
                    extra = {
                        "X-Repo-Commit": COMMIT,
                        "ETag": '"' + hashlib.sha256(data).hexdigest() + '"',
                    }
                    status = 206 if start else 200
                    return self._send(status, data[start:], body, "application/octet-stream", extra)
                return self._missing("RepoNotFound")

            def _missing(self, code: str) -> None:
                self._send(404, b"not found", True, "text/plain", {"X-Error-Code": code})

            def _send(self, status, data, body, kind, extra=None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                for key, value in (extra or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                if body:
                    self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def add_folder(self, repo: str, folder: Path) -> None:
        self.repos[repo] = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}

    def __enter__(self) -> FakeHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
