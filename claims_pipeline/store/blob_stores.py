"""Which blob store a location names: a local folder (blobs.BlobStore) or object storage
(object_blobs.ObjectBlobStore, the same layout and bytes). Above both, so the local store never imports the
object store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from claims_pipeline.common.blob_urls import parse_blob_url
from claims_pipeline.store.blobs import BlobStore

if TYPE_CHECKING:
    from claims_pipeline.store.object_blobs import ObjectBlobStore


def open_blob_store(location: Path | str) -> BlobStore | ObjectBlobStore:
    """The blob store at a folder (a Path, or a str without a scheme) or a URL (file://, s3://, gs://)."""
    if isinstance(location, Path) or "://" not in location:
        return BlobStore(location)
    scheme, where = parse_blob_url(location)
    if scheme == "file":
        return BlobStore(where)
    from claims_pipeline.store.object_blobs import ObjectBlobStore  # its client library only when used

    return ObjectBlobStore(f"{scheme}://{where}")
