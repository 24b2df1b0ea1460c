"""Whether the front door's TLS certificate has expired, or soon will, as the Envoy serving it
reports (its admin `/certs`).

Envoy serves an expired certificate without a word, and every client that checks it refuses
to connect with an error about the certificate, not about the setting. The settings check
(`settings._check_certificate`) loads the pair but cannot read its dates without a parser of
its own, so the warning comes from what Envoy loaded, once it is live.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from shellexec.app import admin_socket

# Soon enough to say so at start: a certificate renewed monthly is due within this.
WARNING_WINDOW = timedelta(days=14)


def warn_if_expiring(socket: Path) -> None:
    """Prints `expiry_warning` for now to stderr, if there is one, before the banner."""
    warning = expiry_warning(socket, datetime.now(UTC))
    if warning is not None:
        print(f"shellexec: warning: {warning}", file=sys.stderr, flush=True)


def expiry_warning(socket: Path, now: datetime) -> str | None:
    """The warning `up` prints when the certificate Envoy serves (read through its admin
    socket at `socket`) expired before `now` or expires within WARNING_WINDOW; None
    otherwise, without TLS, or when Envoy does not say."""
    return warning_for(admin_socket.get_json(socket, "/certs"), now)


def warning_for(certs: Any, now: datetime) -> str | None:
    """`expiry_warning` for the JSON answer `certs` of Envoy's `/certs`."""
    ends = _expirations(certs)
    if not ends:
        return None
    path, end = min(ends, key=lambda found: found[1])
    when = end.strftime("%Y-%m-%d %H:%M UTC")
    if end <= now:
        return (f"the TLS certificate {path} (SHELLEXEC_TLS_CERT_FILE) expired on {when}: "
                "clients that check it refuse to connect; renew it and restart")
    if end - now <= WARNING_WINDOW:
        days = (end - now).days
        left = "less than a day" if days == 0 else f"{days} day{'s' if days > 1 else ''}"
        return (f"the TLS certificate {path} (SHELLEXEC_TLS_CERT_FILE) expires on {when}, in "
                f"{left}: renew it and restart before then")
    return None


def _expirations(certs: Any) -> list[tuple[str, datetime]]:
    """(path, expiration time) of each certificate of each chain Envoy reports."""
    found = []
    chains = certs.get("certificates", []) if isinstance(certs, dict) else []
    for chain in chains if isinstance(chains, list) else []:
        for certificate in chain.get("cert_chain", []) if isinstance(chain, dict) else []:
            try:
                end = datetime.fromisoformat(certificate["expiration_time"])
            except (TypeError, KeyError, ValueError):
                continue
            # Envoy writes UTC with a `Z`; a time without a zone is read as UTC too.
            found.append((str(certificate.get("path", "")),
                          end if end.tzinfo else end.replace(tzinfo=UTC)))
    return found
