"""URLs as text, what DDlog's `url` library (ddlog/builtins/lib/url.dl) is written with:
`url_normalize(s)` parses a URL and writes it back as Rust's url crate does (WHATWG's URL
standard), `url_resolve(base, s)` resolves s against a base URL, and `url_parts(u)` splits a
URL so written into its scheme, username, password, host, port, path, query and fragment, and
what the library derives from them (PARTS).

The parsing: a scheme is required (`relative URL without a base` otherwise) and lower-cased;
the special schemes (http, https, ws, wss, ftp, file) always have an authority, a host in
lower case (`empty host` when none, but for file), a path at least `/`, and their known port
dropped; any other scheme has an authority only after `//`, and a path that does not start
with `/` after no authority is opaque (`cannot_be_a_base`). Ports are decimal up to 65535
(`invalid port number`). `.` and `..` segments of a path are resolved. Characters outside
printable ASCII, and those WHATWG's percent-encode sets name for each part, are written
`%XX` (UTF-8). Not done here: international domain names (IDNA), IPv4 addresses written other
than as four decimals, IPv6 hosts beyond their brackets, backslashes as slashes.

On Spark each step is a Column: regular expressions split a URL, `aggregate` resolves dot
segments, `transform` over a text's characters percent-encodes; no UDF.
"""
from __future__ import annotations

import re

from ddlog.builtins.base import Builtin, fixed, result_column
from ddlog.types import BOOL, STRING, TInt, TOption, TTuple, result_type

U16 = TInt(False, 16)
SPECIAL = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21, "file": None}
# scheme, username, password, host, port, path, query, fragment, domain (a host that is a
# name), port or the scheme's known one, has an authority, cannot be a base
PARTS = TTuple((STRING, STRING, TOption(STRING), TOption(STRING), TOption(U16), STRING,
                TOption(STRING), TOption(STRING), TOption(STRING), TOption(U16), BOOL, BOOL))
_ADDRESS = r"^(\[.*\]|[0-9]+(\.[0-9]+){3})$"

_SCHEME = r"^([A-Za-z][A-Za-z0-9+.\-]*):"
# what each part writes as %XX besides what is not printable ASCII (WHATWG's encode sets)
_FRAGMENT = ' "<>`'
_QUERY = ' "#<>'
_PATH = _QUERY + "?`{}"
_USERINFO = _PATH + "/:;=@[\\]^|"
_OPAQUE = ""
# a URL as url_normalize writes it: scheme, `//` and authority, path, `?` query, `#` fragment
_SPLIT = r"^([^:]*):(//([^/?#]*))?([^?#]*)(\?[^#]*)?(#.*)?$"
_AUTHORITY = r"^((.*)@)?(\[[^\]]*\]|[^:@]*)(:(.*))?$"  # userinfo up to the last @, host, port


# ---------------------------------------------------------------------------------------------
# Python (the oracle's meaning)


def _encode(text: str, chars: str) -> str:
    return "".join(c if "\x21" <= c <= "\x7e" and c not in chars else
                   "".join(f"%{b:02X}" for b in c.encode("utf-8")) for c in text)


def _dots(path: str) -> str:
    """A path starting with `/`, its `.` and `..` segments resolved."""
    out: list[str] = []
    segs = path[1:].split("/")
    for s in segs:
        if s == "..":
            out = out[:-1]
        elif s != ".":
            out.append(s)
    if segs[-1] in (".", ".."):
        out.append("")
    return "/" + "/".join(out)


def normalize_python(url: str) -> tuple[bool, str]:
    """(True, the URL as the url crate writes it) or (False, what is wrong with it)."""
    s = re.sub("[\t\n\r]", "", url.strip("".join(map(chr, range(0x21)))))
    m = re.match(_SCHEME, s)
    if m is None:
        return False, "relative URL without a base"
    scheme, rest = m.group(1).lower(), s[m.end():]
    special = scheme in SPECIAL
    authority = None
    if scheme == "file" and not rest.startswith("//"):
        authority = ""  # `file:/tmp`: the local host, written `file:///tmp`
    elif special or rest.startswith("//"):
        rest = rest.lstrip("/") if special and scheme != "file" else rest[2:]
        cut = re.search(r"[/?#]", rest)
        authority, rest = (rest[:cut.start()], rest[cut.start():]) if cut else (rest, "")
    path, query, fragment = re.match(r"^([^?#]*)(\?[^#]*)?(#.*)?$", rest).groups()
    out = scheme + ":"
    if authority is not None:
        a = re.match(_AUTHORITY, authority)
        userinfo, host, port = a.group(2), a.group(3), a.group(5) or ""
        host = host.lower() if special else host
        if host == "" and special and scheme != "file":
            return False, "empty host"
        if not re.fullmatch("[0-9]*", port) or port and int(port) > 65535:
            return False, "invalid port number"
        out += "//"
        if userinfo:
            user, colon, password = userinfo.partition(":")
            out += _encode(user, _USERINFO) + (":" + _encode(password, _USERINFO)
                                               if password else "") + "@"
        out += _encode(host, _PATH)
        if port and int(port) != SPECIAL.get(scheme, -1):
            out += f":{int(port)}"
    if authority is not None or path.startswith("/"):
        path = "/" if special and path == "" else path
        out += _encode(_dots(path) if path.startswith("/") else path, _PATH)
    else:  # no authority and a path not from the root: an opaque one
        out += _encode(path, _OPAQUE)
    if query is not None:
        out += "?" + _encode(query[1:], _QUERY + ("'" if special else ""))
    if fragment is not None:
        out += "#" + _encode(fragment[1:], _FRAGMENT)
    return True, out


def resolve_python(base: str, other: str) -> tuple[bool, str]:
    """`other` resolved against `base` (a URL as url_normalize writes it), written so."""
    o = re.sub("[\t\n\r]", "", other.strip("".join(map(chr, range(0x21)))))
    if re.match(_SCHEME, o):
        return normalize_python(o)
    scheme, _, authority, path, query, _ = parts_python(base)
    if authority is None and not path.startswith("/") and not o.startswith("#"):
        return False, "relative URL with a cannot-be-a-base base"
    head = scheme + ":" + ("//" + authority if authority is not None else "")
    if o.startswith("//"):
        return normalize_python(scheme + ":" + o)
    if o.startswith("/"):
        return normalize_python(head + o)
    if o == "" or o.startswith("#"):
        return normalize_python(head + path + (query or "") + o)
    if o.startswith("?"):
        return normalize_python(head + path + o)
    folder = "/" if authority is not None and path == "" else path[:path.rfind("/") + 1]
    return normalize_python(head + folder + o)


def parts_python(url: str) -> tuple:
    """The split of a URL as url_normalize writes it: scheme, None, authority, path, query
    (with its `?`), fragment (with its `#`); None for each part it does not have."""
    m = re.match(_SPLIT, url)
    if m is None:  # not one written by url_normalize (a default Url's "")
        return ("", None, None, "", None, None)
    return (m.group(1), None, m.group(3), m.group(4), m.group(5), m.group(6))


def url_parts_python(url: str) -> tuple:
    scheme, _, authority, path, query, fragment = parts_python(url)
    user, password, host, port = "", None, None, None
    if authority is not None:
        a = re.match(_AUTHORITY, authority)
        userinfo, host, port = a.group(2), a.group(3) or None, a.group(5)
        if userinfo is not None:
            user, colon, pw = userinfo.partition(":")
            password = pw if colon else None
        port = int(port) if port else None
    domain = host if host is not None and not re.match(_ADDRESS, host) else None
    return (scheme, user, password, host, port, path,
            query[1:] if query is not None else None,
            fragment[1:] if fragment is not None else None, domain,
            port if port is not None else SPECIAL.get(scheme), authority is not None,
            authority is None and not path.startswith("/"))


# ---------------------------------------------------------------------------------------------
# Spark


def _trimmed(F, c):
    return F.regexp_replace(F.regexp_replace(c, "^[\\x00-\\x20]+|[\\x00-\\x20]+$", ""),
                            "[\\t\\n\\r]", "")


def _encode_spark(F, c, chars: str):
    """Each character outside printable ASCII or among `chars` as its UTF-8 bytes, `%XX`."""
    keep = "^[\\x21-\\x7E]$" if not chars else \
        "^[\\x21-\\x7E&&[^" + "".join("\\" + ch for ch in chars) + "]]$"
    each = F.regexp_extract_all(c, F.lit("(?s)."), F.lit(0))  # by code point
    return F.array_join(F.transform(each, lambda ch: F.when(F.regexp_like(ch, F.lit(keep)), ch)
                                    .otherwise(F.regexp_replace(F.hex(F.encode(ch, "UTF-8")),
                                                                "(..)", "%$1"))), "")


def _dots_spark(F, path):
    """A path starting with `/`, its `.` and `..` segments resolved."""
    segs = F.slice(F.split(path, "/"), 2, 1 << 30)
    kept = F.aggregate(segs, F.array().cast("array<string>"),
                       lambda acc, s: F.when(s == "..", F.slice(acc, 1, F.greatest(
                           F.size(acc) - 1, F.lit(0)))).when(s == ".", acc)
                       .otherwise(F.concat(acc, F.array(s))))
    last = F.element_at(segs, -1)
    kept = F.when(last.isin(".", ".."), F.concat(kept, F.array(F.lit("")))).otherwise(kept)
    return F.concat(F.lit("/"), F.array_join(kept, "/"))


def _group(F, c, pattern: str, i: int):
    return F.regexp_extract(c, pattern, i)  # "" where the group took no part


def normalize_spark(sx, url):
    """A struct: `text`, the URL as the url crate writes it (or null), `err`, what is wrong
    with it (or null). Each step binds what it computes (`sx.let`): the parts are read many
    times, and a Column repeats an expression wherever it is read."""
    F = sx.F

    def split(s):
        scheme = _group(F, s, _SCHEME, 1)
        rest = F.substring(s, F.length(scheme) + 2, 1 << 30)
        return F.struct(F.lower(scheme).alias("scheme"), rest.alias("rest"),
                        F.regexp_like(s, F.lit(_SCHEME)).alias("valid"))

    def authority(v):
        scheme, rest = v["scheme"], v["rest"]
        special = scheme.isin(*SPECIAL)
        local = (scheme == "file") & ~F.startswith(rest, F.lit("//"))  # `file:/tmp`
        has = special | F.startswith(rest, F.lit("//"))
        after = (F.when(local, rest)
                 .when(special & (scheme != "file"), F.regexp_replace(rest, "^/*", ""))
                 .otherwise(F.substring(rest, 3, 1 << 30)))
        return sx.let(F.struct(after.alias("after"), has.alias("has")), lambda w: F.struct(
            scheme.alias("scheme"), v["valid"].alias("valid"), special.alias("special"),
            w["has"].alias("has"),
            F.when(local, F.lit("")).when(w["has"], _group(F, w["after"], "^([^/?#]*)", 1)
                                          ).alias("authority"),
            F.when(local, rest).when(w["has"], F.regexp_replace(w["after"], "^[^/?#]*", "")
                                     ).otherwise(rest).alias("rest")))

    def parts(v):
        a, rest = v["authority"], v["rest"]
        port = _group(F, a, _AUTHORITY, 5)
        host = _group(F, a, _AUTHORITY, 3)
        return F.struct(
            *[v[n].alias(n) for n in ("scheme", "valid", "special", "has")],
            _group(F, rest, "^([^?#]*)", 1).alias("path"),
            F.when(F.regexp_like(rest, F.lit("^[^#]*\\?")),
                   _group(F, rest, "\\?([^#]*)", 1)).alias("query"),
            F.when(F.contains(rest, F.lit("#")), _group(F, rest, "#(.*)$", 1)).alias("fragment"),
            F.when(F.regexp_like(a, F.lit("@")), _group(F, a, _AUTHORITY, 2)).alias("userinfo"),
            F.when(v["special"], F.lower(host)).otherwise(host).alias("host"),
            port.alias("port"),
            F.when(F.regexp_like(port, F.lit("^0*[0-9]{1,5}$")), port.cast("int")
                   ).alias("number"))

    def written(v):
        scheme, special, has = v["scheme"], v["special"], v["has"]
        path, query, fragment = v["path"], v["query"], v["fragment"]
        userinfo, host, port, number = v["userinfo"], v["host"], v["port"], v["number"]
        default = F.lit("")
        for name, known in SPECIAL.items():
            if known is not None:
                default = F.when(scheme == name, F.lit(str(known))).otherwise(default)
        user = _group(F, userinfo, "^([^:]*)", 1)
        password = _group(F, userinfo, "^[^:]*:(.*)$", 1)
        at = F.when(userinfo.isNull() | (userinfo == ""), F.lit("")).otherwise(F.concat(
            _encode_spark(F, user, _USERINFO),
            F.when(password != "", F.concat(F.lit(":"), _encode_spark(F, password, _USERINFO)))
            .otherwise(F.lit("")), F.lit("@")))
        shown_port = F.when((port != "") & (number.cast("string") != default),
                            F.concat(F.lit(":"), number.cast("string"))).otherwise(F.lit(""))
        rooted = F.startswith(path, F.lit("/"))
        full = F.when(special & (path == ""), F.lit("/")).otherwise(path)
        shown_path = F.when(has | rooted, _encode_spark(F, F.when(
            F.startswith(full, F.lit("/")), _dots_spark(F, full)).otherwise(full), _PATH)
        ).otherwise(_encode_spark(F, path, _OPAQUE))
        shown_query = F.when(special, _encode_spark(F, query, _QUERY + "'")).otherwise(
            _encode_spark(F, query, _QUERY))
        text = F.concat(scheme, F.lit(":"),
                        F.when(has, F.concat(F.lit("//"), at, _encode_spark(F, host, _PATH),
                                             shown_port)).otherwise(F.lit("")),
                        shown_path,
                        F.when(query.isNotNull(), F.concat(F.lit("?"), shown_query))
                        .otherwise(F.lit("")),
                        F.when(fragment.isNotNull(), F.concat(F.lit("#"), _encode_spark(
                            F, fragment, _FRAGMENT))).otherwise(F.lit("")))
        err = (F.when(~v["valid"], F.lit("relative URL without a base"))
               .when(has & special & (scheme != "file") & (host == ""), F.lit("empty host"))
               .when(has & (port != "") & (number.isNull() | (number > 65535)),
                     F.lit("invalid port number")))
        return F.struct(F.when(err.isNull(), text).alias("text"), err.alias("err"))

    return sx.let(sx.let(sx.let(sx.let(_trimmed(F, url), split), authority), parts), written)


def resolve_spark(sx, base, other):
    """`other` resolved against `base` (written by url_normalize): a struct as
    normalize_spark's."""
    F = sx.F

    def joined(v):
        o, scheme, authority, path, query = (v[n] for n in ("o", "scheme", "authority", "path",
                                                            "query"))
        has = F.regexp_like(v["base"], F.lit("^[^:]*://"))
        head = F.concat(scheme, F.lit(":"), F.when(has, F.concat(F.lit("//"), authority))
                        .otherwise(F.lit("")))
        absolute = F.regexp_like(o, F.lit(_SCHEME))
        text = (F.when(absolute, o)
                .when(F.startswith(o, F.lit("//")), F.concat(scheme, F.lit(":"), o))
                .when(F.startswith(o, F.lit("/")), F.concat(head, o))
                .when((o == "") | F.startswith(o, F.lit("#")), F.concat(head, path, query, o))
                .when(F.startswith(o, F.lit("?")), F.concat(head, path, o))
                .when(has & (path == ""), F.concat(head, F.lit("/"), o))
                .otherwise(F.concat(head, _group(F, path, "^(.*/)?", 1), o)))
        opaque = ~has & ~F.startswith(path, F.lit("/")) & ~absolute & \
            ~F.startswith(o, F.lit("#"))
        return F.struct(text.alias("text"), opaque.alias("opaque"))

    given = F.struct(_trimmed(F, other).alias("o"), base.alias("base"),
                     *[_group(F, base, _SPLIT, i).alias(n) for i, n in
                       ((1, "scheme"), (3, "authority"), (4, "path"), (5, "query"))])
    def checked(v):
        return sx.let(normalize_spark(sx, v["text"]), lambda n: F.struct(
            F.when(~v["opaque"], n["text"]).alias("text"),
            F.when(v["opaque"], F.lit("relative URL with a cannot-be-a-base base"))
            .otherwise(n["err"]).alias("err")))

    return sx.let(sx.let(given, joined), checked)


def parts_spark(sx, url):
    F = sx.F

    def parts(v):
        authority, port = v["authority"], _group(F, v["authority"], _AUTHORITY, 5)
        has = F.regexp_like(v["url"], F.lit("^[^:]*://"))
        userinfo = F.when(has & F.regexp_like(authority, F.lit("@")),
                          _group(F, authority, _AUTHORITY, 2))
        host = F.when(has & (_group(F, authority, _AUTHORITY, 3) != ""),
                      _group(F, authority, _AUTHORITY, 3))
        number = F.when(has & (port != ""), port.cast("long"))
        known = F.lit(None).cast("long")
        for name, default in SPECIAL.items():
            if default is not None:
                known = F.when(v["scheme"] == name, F.lit(default)).otherwise(known)
        return F.struct(
            v["scheme"].alias("_0"),
            F.coalesce(_group(F, userinfo, "^([^:]*)", 1), F.lit("")).alias("_1"),
            F.when(F.contains(userinfo, F.lit(":")), _group(F, userinfo, "^[^:]*:(.*)$", 1)
                   ).alias("_2"),
            host.alias("_3"), number.alias("_4"), v["path"].alias("_5"),
            F.when(v["query"] != "", F.substring(v["query"], 2, 1 << 30)).alias("_6"),
            F.when(v["fragment"] != "", F.substring(v["fragment"], 2, 1 << 30)).alias("_7"),
            F.when(~F.regexp_like(host, F.lit(_ADDRESS)), host).alias("_8"),
            F.coalesce(number, known).alias("_9"), has.alias("_10"),
            (~has & ~F.startswith(v["path"], F.lit("/"))).alias("_11"))

    split = F.struct(url.alias("url"), *[_group(F, url, _SPLIT, i).alias(n) for i, n in (
        (1, "scheme"), (3, "authority"), (4, "path"), (5, "query"), (6, "fragment"))])
    return sx.let(split, parts).cast(sx.spark_type(PARTS))


def _result(sx, pair, ty):
    return sx.let(pair, lambda v: result_column(sx, v["err"].isNull(), v["text"], v["err"], ty))


def _result_python(pair: tuple[bool, str]):
    from ddlog.values import Record
    ok, text = pair
    return Record("Ok" if ok else "Err", (text,))


URLS: dict[str, Builtin] = {b.name: b for b in [
    Builtin("url_normalize", 1, "url_normalize(string) -> Result<string, string>",
            "a URL as Rust's url crate writes it once parsed, or what is wrong with it",
            fixed(STRING, result=result_type(STRING, STRING)),
            lambda sx, a, ts, t: _result(sx, normalize_spark(sx, a[0]), t),
            lambda a, ts, t: _result_python(normalize_python(a[0]))),
    Builtin("url_resolve", 2, "url_resolve(string, string) -> Result<string, string>",
            "the second URL (maybe relative) resolved against the first, written as "
            "url_normalize writes it", fixed(STRING, STRING, result=result_type(STRING, STRING)),
            lambda sx, a, ts, t: _result(sx, resolve_spark(sx, a[0], a[1]), t),
            lambda a, ts, t: _result_python(resolve_python(a[0], a[1]))),
    Builtin("url_parts", 1, "url_parts(string) -> (string, string, Option<string>, "
            "Option<string>, Option<u16>, string, Option<string>, Option<string>, "
            "Option<string>, Option<u16>, bool, bool)",
            "a URL written by url_normalize: scheme, username, password, host, port, path, "
            "query, fragment, domain, port or the scheme's, has an authority, cannot be a base",
            fixed(STRING, result=PARTS),
            lambda sx, a, ts, t: parts_spark(sx, a[0]),
            lambda a, ts, t: url_parts_python(a[0])),
]}
