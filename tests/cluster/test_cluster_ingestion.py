"""Document ingestion across two real server processes: a process that restarts (its start-up
recovery runs) leaves the document another process is indexing alone (backend/rag/jobs.py
leases), and that process finishes it."""

from __future__ import annotations

from tests.cluster.clients import INSTANCE_HEADER, wait_for
from tests.cluster.processes import Cluster

TEXT = b"Walruses haul out on sea ice to rest between dives. " * 40


def _status(user, base: str, document_id: str) -> str:
    response = user.get(f"/api/documents/{document_id}", base=base)
    assert response.status_code == 200, response.text[:300]
    return response.json()["status"]


def test_restarting_a_leaves_the_document_b_is_indexing_alone(cluster: Cluster) -> None:
    user = cluster.user(cluster.b.url)
    user.sign_up()
    cluster.b.control.hold_embedding()
    try:
        uploaded = user.post("/api/documents", files={"file": ("walrus.txt", TEXT, "text/plain")})
        assert uploaded.status_code == 202, uploaded.text[:300]
        assert uploaded.headers[INSTANCE_HEADER] == "b"
        document_id = uploaded.json()["id"]
        wait_for(cluster.b.control.embedding_held, timeout=30, what="B indexing the document")
        for graceful in (True, False):  # A stops cleanly, then crashes; each start recovers
            cluster.a.restart(graceful=graceful)
            assert _status(user, cluster.a.url, document_id) == "processing"
            assert cluster.b.control.embedding_held()
    finally:
        cluster.b.control.release_embedding()
    wait_for(lambda: _status(user, cluster.a.url, document_id) == "ready", timeout=30, what="the document ready")
    found = user.get(f"/api/documents/{document_id}", base=cluster.b.url).json()
    assert found["status"] == "ready" and found.get("error") in (None, ""), found
