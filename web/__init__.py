"""Crescent's web layer: Starlette routes, the chat WebSocket, security middleware.

Build the app with :func:`web.app.create_app`; serve it with ``python -m web serve``.
Imports `backend` only, never `engine`.
"""
