"""The `notify` section: the Apprise channels told after each audit, secrets kept in the environment.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from claims_pipeline.config.sections.strict import _ENV_NAME_RE, _check_networks, _Strict

# ---- notifications (claims_pipeline/notify) ------------------------------------------------------------------
_APPRISE_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S*")
ENV_REF_RE = re.compile(r"\$\{([^}]*)\}")


class NotifySettings(_Strict):
    """Notifications after each audit, through Apprise (claims_pipeline/notify). Off by default: no URL, nothing
    is sent. Secrets stay in the environment: a URL's secret part is written `${ENV_VAR}`, or the whole URL list is
    in the variable urls_env names; both are read when a message is sent."""

    urls: list[str] = Field(
        default_factory=list, description="Apprise URLs, one per channel (slack://, msteams://, mailtos://, "
        "matrixs://, ntfys://, json://, form://…). Write each secret part as `${ENV_VAR}` (e.g. "
        "`slack://${SLACK_TOKEN}/#audits`): it is read from the environment when a message is sent; "
        "docs/notifications.md.")
    urls_env: str | None = Field(
        None, description="Name of an environment variable holding further Apprise URLs (separated by spaces or "
        "new lines): for a channel whose whole address is a secret.")
    always_send: bool = Field(
        False, description="Also send a short 'nothing new' message (the headline numbers and the report) when "
        "nothing is new since the last notification; false = send nothing then.")
    on_run_failure: bool = Field(True, description="Also notify a failed run (the run-failure sensor; the CLI "
                                 "after a failed audit).")
    max_items: int = Field(8, ge=1, le=100, description="Items listed per kind of news; the others are counted, "
                           "and listed in the report.")
    report_url: str | None = Field(
        None, description="Where the reports folder is published (e.g. https://ci.example.org/kb-audit/): the "
        "message links <report_url>/<report folder>/report.html instead of the local path.")
    allow_networks: list[str] = Field(
        default_factory=list, description="Addresses or CIDR ranges a channel may reach besides public ones and "
        "fetch.allow_networks / fetch.allow_hosts (e.g. 10.20.0.0/16 for a chat or mail server on the intranet). "
        "The cloud metadata and link-local addresses are refused whatever this says; production refuses loopback.")
    timeout_s: float = Field(
        30.0, gt=0, le=600, description="Each channel's send, redirects and answer included, ends after this many "
        "seconds, whatever the service does (a slow one is recorded as failed; its news goes with the next message). "
        "The channels are sent to at once: a notification step takes about this long at most.")

    @field_validator("urls")
    @classmethod
    def _apprise_urls(cls, v: list[str]) -> list[str]:
        # never echo a URL: it may hold a pasted secret; the position names it
        for i, url in enumerate(v):
            if not _APPRISE_URL_RE.fullmatch(url.strip()):
                raise ValueError(f"entry {i + 1}: not an Apprise URL (service://…)")
            for name in ENV_REF_RE.findall(url):
                if not _ENV_NAME_RE.fullmatch(name):
                    raise ValueError(f"entry {i + 1}: ${{{name}}} is not the name of an environment variable")
            if "${" in ENV_REF_RE.sub("", url):  # `${TOKEN` would be sent as it is, the secret never read
                raise ValueError(f"entry {i + 1}: a '${{' without its closing '}}' (write each secret part as ${{ENV_VAR}})")
        return v

    @field_validator("allow_networks")
    @classmethod
    def _notify_networks_parse(cls, v: list[str]) -> list[str]:
        return _check_networks(v)

    @field_validator("urls_env")
    @classmethod
    def _urls_env_name(cls, v: str | None) -> str | None:
        if v is not None and not _ENV_NAME_RE.fullmatch(v):
            raise ValueError("the name of an environment variable (letters, digits, _), not a URL")
        return v

    @field_validator("report_url")
    @classmethod
    def _report_url(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"https?://[^\s/?#]+(?:/\S*)?", v):
            raise ValueError("an http:// or https:// URL without spaces")
        return v

    @property
    def configured(self) -> bool:
        return bool(self.urls or self.urls_env)
