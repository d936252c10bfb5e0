"""The one redaction of secrets, for every error message, log line, status field and indexed transcript.

:func:`redact` replaces two kinds of secret by ``[REDACTED]``:

* the secrets this process was given (API keys, ``remote.headers`` values, the reranker's key), registered with
  :func:`register_secret` where they are read, whatever their format (an Azure ``api-key`` is 32 hex digits);
* text shaped like a credential: vendor API keys (OpenAI, Anthropic, Google, Voyage, Hugging Face, GitHub, Slack,
  AWS), JWTs, bearer tokens, private keys, ``key=``/``token=``/``password=`` assignments, the password of a URL
  (``postgresql://user:password@host``) and the token an endpoint URL carries as its user info alone
  (``https://TOKEN@gateway/v1``).
"""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = ["REDACTED", "redact", "register_assigned_secrets", "register_secret", "split_url_credentials",
           "url_passwords", "url_without_credentials", "url_without_password"]

REDACTED = "[REDACTED]"

#: registered values shorter than this are not redacted (a header such as ``X-Cache: on`` is no secret)
_MIN_SECRET_CHARS = 8

#: the words by which a name says it holds a credential (``OPENAI_API_KEY``, ``HF_TOKEN``, ``db_password``)
_SECRET_NAME_WORDS = "key|token|secret|password|passwd|credential"

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.DOTALL), REDACTED),
    (re.compile(r"\bBearer\s+[A-Za-z0-9\-._~+/]{8,}=*", re.IGNORECASE), f"Bearer {REDACTED}"),
    (re.compile(r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_\-]{16,}"), REDACTED),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), REDACTED),
    (re.compile(r"\bpa-[A-Za-z0-9_\-]{20,}"), REDACTED),  # Voyage AI
    (re.compile(r"\bhf_[A-Za-z0-9]{30,}"), REDACTED),  # Hugging Face (QMD's and local models' downloads)
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"), REDACTED),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"), REDACTED),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), REDACTED),
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"), REDACTED),
    # the password of a URL: scheme://user:password@host, up to the host's '@' (a password may hold an unencoded '@')
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]{0,30}://[^\s/:@]{0,256}:)[^\s/]{1,256}@"), rf"\1{REDACTED}@"),
    # the user info of an endpoint URL given alone (https://TOKEN@host): httpx sends it as the Basic credential
    (re.compile(r"(?i)\b((?:https?|wss?)://)[^\s/:@]{1,256}@"), rf"\1{REDACTED}@"),
    # key=/token=/secret=/password: followed by a long value with at least one digit
    (
        re.compile(
            rf"(?i)(\b[\w\-]{{0,40}}(?:{_SECRET_NAME_WORDS})s?[\"']?\s{{0,8}}[=:]\s{{0,8}}[\"']?)"
            r"(?=[A-Za-z0-9+/_\-.]{0,512}\d)[A-Za-z0-9+/_\-.]{16,}=*"
        ),
        r"\1" + REDACTED,
    ),
)
# Every repetition that can start at many places in one run of text is bounded, so redaction stays linear
# in the text's length ("a-a-a-…" took quadratic time with unbounded prefixes).

_lock = threading.Lock()
_known: set[str] = set()


def register_secret(*values: str | None) -> None:
    """Remember secret values (API keys, header values) so that :func:`redact` removes them from any text."""
    fresh = {v.strip() for v in values if v and len(v.strip()) >= _MIN_SECRET_CHARS}
    if fresh:
        with _lock:
            _known.update(fresh)


#: a ``NAME=value`` word whose name says it is a credential (``auth`` too: ``GATEWAY_AUTH=…``), its value grouped
_SECRET_ASSIGNMENT = re.compile(rf"(?i)[A-Z0-9_]*(?:{_SECRET_NAME_WORDS}|auth)[A-Z0-9_]*=(.+)", re.DOTALL)


def register_assigned_secrets(words: Iterable[str]) -> None:
    """Register the value of each ``NAME=value`` word whose name says it is a credential (``QMD_API_KEY=…`` in a
    command's words), whatever its shape."""
    register_secret(*(m.group(1) for m in map(_SECRET_ASSIGNMENT.fullmatch, words) if m))


def redact(text: str, *secrets: str | None) -> str:
    """``text`` without the registered secrets, the given ``secrets`` and credential-shaped tokens."""
    with _lock:
        known = sorted(_known | {s for s in secrets if s and len(s) >= _MIN_SECRET_CHARS}, key=len, reverse=True)
    for secret in known:
        text = text.replace(secret, REDACTED)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


#: a quoted value runs to its closing quote, or to the end of the string when the quote is never closed; an unquoted
#: one to the next space or ``&``, a backslash escaping the character after it (libpq reads ``a\ b`` as "a b")
_PASSWORD_PAIR = re.compile(r"(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*(?:'|$)|(?:[^&\s\\]|\\.)*\\?)")


def url_without_password(url: str, mask: str | None = None) -> str | None:
    """A database URL (``postgresql://user:pw@host/db?password=…``) or libpq key/value string
    (``host=… password=…``) with its password replaced by ``mask``, or left out when ``mask`` is None (so the
    string still connects, the password coming from elsewhere); None when the URL cannot be parsed."""
    if "://" in url:
        try:
            parts = urlsplit(url)
        except ValueError:
            return None
        netloc = parts.netloc
        if "@" in netloc:
            user, host = netloc.rsplit("@", 1)
            name, has_password, _ = user.partition(":")
            netloc = f"{name}:{mask}@{host}" if has_password and mask is not None else f"{name}@{host}"
        url = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    if mask is not None:
        return _PASSWORD_PAIR.sub(lambda m: m.group(1) + mask, url)
    url = _PASSWORD_PAIR.sub("", url)
    return re.sub(r"\?&+", "?", re.sub(r"&{2,}", "&", url)).rstrip("?&").strip() if "://" in url else \
        " ".join(url.split())


def url_without_credentials(url: str) -> str:
    """An endpoint URL (``remote.base_url``) as it may be shown, stored or fingerprinted: without the password of its
    ``user:password@`` part (the user name stays: it names the account) and without a user info given alone
    (``https://TOKEN@host/v1``: the token is the credential, sent as ``Authorization: Basic``). A URL written
    without its scheme (``TOKEN@host/v1``) loses them too; a URL without credentials is returned as
    :func:`url_without_password` returns it."""
    if "://" not in url:  # refused, but quoted in the refusal
        return url_without_credentials(f"http://{url}").removeprefix("http://")
    try:
        userinfo, at, _ = urlsplit(url).netloc.rpartition("@")
    except ValueError:
        return url_without_password(url) or url
    if at and ":" not in userinfo:
        url = url.replace(f"{userinfo}@", "", 1)
    return url_without_password(url) or url


def url_passwords(url: str) -> list[str]:
    """The passwords of a database URL or libpq key/value string, as written and as libpq reads them
    (percent-decoded, backslash escapes undone), the longest first (replaced in turn, none leaves part of
    another): what to scrub from a driver's messages."""
    found = []
    try:
        if urlsplit(url).password:
            found.append(str(urlsplit(url).password))
            found.append(unquote(str(urlsplit(url).password)))
    except ValueError:
        pass
    for match in _PASSWORD_PAIR.finditer(url):
        value = match.group(2)
        quoted = re.fullmatch(r"'((?:[^'\\]|\\.)*)'?", value)
        written = quoted.group(1) if quoted else value
        found.append(written)
        found.append(re.sub(r"\\(.)", r"\1", written))
    return sorted({s for s in found if s}, key=len, reverse=True)


def split_url_credentials(url: str) -> tuple[str, dict[str, str]]:
    """``url`` without its ``user:password@`` (or ``TOKEN@``) part, and the ``Authorization: Basic`` header that part
    stands for (what httpx and requests send for it; for a token alone, ``TOKEN:``): an SDK given the bare URL logs no
    password with each request's URL. The password (or token) and the header's value are registered as secrets
    (redacted wherever they would show)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url, {}
    if "@" not in parts.netloc:
        return url, {}
    userinfo, host = parts.netloc.rsplit("@", 1)
    user, has_password, password = userinfo.partition(":")
    credential = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
    secret = password if has_password else user  # a user info alone is a token (https://TOKEN@host)
    register_secret(secret, unquote(secret), credential)
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment)), {
        "Authorization": f"Basic {credential}"}
