"""An S3-compatible server on 127.0.0.1 for the object-storage blob tests: moto in server mode, in a thread of
the test process, and the environment a real S3 client needs to reach it (endpoint, plain http, dummy keys)."""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

import boto3
from moto.server import ThreadedMotoServer


class S3Server:
    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    @property
    def env(self) -> dict[str, str]:
        """What obstore reads (AWS_* variables): the same for the test process and its subprocesses."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ALLOW_HTTP": "true",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1",
        }

    @property
    def client(self):  # type: ignore[no-untyped-def]
        """Another S3 client (boto3, which moto brings), to look at the server and write behind the store's back
        without going through the code under test."""
        env = self.env
        return boto3.client("s3", endpoint_url=self.endpoint, region_name=env["AWS_REGION"],
                            aws_access_key_id=env["AWS_ACCESS_KEY_ID"], aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"])

    def new_bucket(self) -> str:
        """A fresh bucket per test: no test sees another's objects."""
        name = f"blobs-{secrets.token_hex(4)}"
        self.client.create_bucket(Bucket=name)
        return name

    def keys(self, bucket: str) -> list[str]:
        return sorted(o["Key"] for o in self.client.list_objects_v2(Bucket=bucket).get("Contents", []))

    def read(self, bucket: str, key: str) -> bytes:
        return self.client.get_object(Bucket=bucket, Key=key)["Body"].read()

    def write(self, bucket: str, key: str, body: bytes) -> None:
        self.client.put_object(Bucket=bucket, Key=key, Body=body)

    def delete(self, bucket: str, key: str) -> None:
        self.client.delete_object(Bucket=bucket, Key=key)

    def pending_uploads(self, bucket: str) -> int:
        """Multipart uploads begun and never completed (they would hold hidden partial objects)."""
        return len(self.client.list_multipart_uploads(Bucket=bucket).get("Uploads", []))


@contextmanager
def s3_server() -> Iterator[S3Server]:
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one access-log line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    saved = {k: os.environ.get(k) for k in S3Server("").env}
    s3 = S3Server(f"http://{host}:{port}")
    os.environ.update(s3.env)
    try:
        yield s3
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.stop()
