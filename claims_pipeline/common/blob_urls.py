"""The URL of a blob store (settings: cache.blob_url): read by the settings, which check it, and by the store,
which opens it. Here, below both, so neither imports the other for it."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

BLOB_SCHEMES = ("file", "s3", "gs")


def parse_blob_url(url: str) -> tuple[str, str]:
    """(scheme, where): the absolute folder of a file:// URL, or the bucket/prefix of an s3:// or gs:// one.
    ValueError says what is wrong; the URL's text is not echoed (a pasted URL may carry a secret)."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in BLOB_SCHEMES:
        raise ValueError("a file:///absolute/folder, s3://bucket/prefix or gs://bucket/prefix URL")
    if parts.query or parts.fragment or "@" in parts.netloc:
        raise ValueError("no query, fragment or credentials in a blob store URL (credentials come from the "
                         "environment: AWS_* or GOOGLE_* variables)")
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise ValueError("a file:// URL names a local folder: file:///absolute/folder")
        folder = unquote(parts.path)
        if not folder.startswith("/"):
            raise ValueError("a file:// URL needs an absolute folder: file:///absolute/folder")
        return scheme, folder
    if not re.fullmatch(r"[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]", parts.netloc):
        raise ValueError(f"{scheme}:// needs a bucket name (lowercase letters, digits, '.', '-', '_'): "
                         f"{scheme}://bucket/prefix")
    return scheme, f"{parts.netloc}{parts.path.rstrip('/')}"
