"""What a client and `ddlog serve` agree on (ddlog/app/serve.py says how it is used): the file
that publishes a server, the headers that carry a request's and an answer's authentication,
and the HMAC they hold."""
from __future__ import annotations

import hashlib
import hmac

SERVE_FILE = ".serve.json"
# the headers of a request's and an answer's authentication (proof())
NONCE, AUTH, PROOF = "X-DDlog-Nonce", "X-DDlog-Auth", "X-DDlog-Proof"


def proof(token: str, *parts: bytes | str) -> str:
    """An HMAC-SHA256 of `parts` under the token: what a client or the server sends to show
    it holds the token without sending it."""
    mac = hmac.new(token.encode(), digestmod=hashlib.sha256)
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        mac.update(len(data).to_bytes(8, "big") + data)
    return mac.hexdigest()
