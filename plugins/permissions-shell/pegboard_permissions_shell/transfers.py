"""File effects of programs that move data over the network or between trees: curl, wget,
rsync, scp.

Their local files hide in option values (``curl -o FILE``, ``-T FILE``, ``-d @FILE``,
``-F name=@FILE``, ``wget -O FILE``, ``--post-file=FILE``), in ``file://`` URLs, and in the
names a download gets from its URL (``curl -O``, plain ``wget URL``). Remote operands
(``host:path``, ``rsync://``) are not local files. A config file read with ``curl -K`` or
``wget --config`` / ``-e`` can set any option, so such a line is ``opaque``.
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote, urlsplit

from pegboard_permissions_shell.effects import Effects, Ref, family, into_dir
from pegboard_permissions_shell.options import Grammar, ParsedArgs, grammar, parse_args


def _values(p: ParsedArgs, *names: str) -> list[Ref]:
    return [(o.index, o.value) for o in p.values(*names) if o.value is not None and o.value != "-"]


def _unknown_letters(p: ParsedArgs, g: Grammar, flags: frozenset[str]) -> list[str]:
    """Short options given that are neither in the grammar nor among the program's flags."""
    return [o.given for o in p.options if o.name.startswith("-") and len(o.name) == 2
            and o.name[1] not in flags and o.name[1] not in g.short]


def _url_name(url: str) -> str | None:
    """The file name a download of ``url`` gets (its last path segment), or None."""
    try:
        parts = urlsplit(url if "://" in url else "http://" + url)
    except ValueError:
        return None
    name = posixpath.basename(unquote(parts.path))
    return name or None


def _file_url(url: str) -> str | None:
    """The local path of a ``file:`` URL (``file:///x``, ``file://localhost/x``, ``file:/x``)."""
    if url[:5].lower() != "file:":
        return None
    rest = url[5:]
    if rest.startswith("//"):
        host, _slash, path = rest[2:].partition("/")
        if host.lower() not in ("", "localhost", "127.0.0.1"):
            return None
        rest = "/" + path
    rest = re.split(r"[?#]", rest, maxsplit=1)[0]
    return unquote(rest) or None


# -- curl -----------------------------------------------------------------------------------

_CURL_VALUED = (
    "output output-dir upload-file data data-ascii data-binary data-raw data-urlencode json form form-string "
    "config cookie cookie-jar dump-header trace trace-ascii stderr libcurl etag-save etag-compare hsts alt-svc "
    "cert key cacert capath crlfile netrc-file pinnedpubkey write-out proxy-cert proxy-key proxy-cacert "
    "proxy-capath proxy-crlfile header proxy-header variable url-query url user proxy proxy-user referer "
    "user-agent range max-time connect-timeout retry retry-delay retry-max-time request resolve connect-to "
    "interface local-port limit-rate max-filesize max-redirs speed-limit speed-time time-cond continue-at quote "
    "telnet-option ftp-port mail-from mail-rcpt mail-auth oauth2-bearer aws-sigv4 unix-socket "
    "abstract-unix-socket dns-servers dns-interface dns-ipv4-addr dns-ipv6-addr doh-url preproxy socks4 "
    "socks4a socks5 socks5-hostname tls-max ciphers curves cert-type key-type pass engine random-file egd-file "
    "keepalive-time expect100-timeout happy-eyeballs-timeout-ms sasl-authzid service-name krb delegation "
    "ftp-method ftp-account ftp-alternative-to-user ftp-ssl-ccc-mode login-options proto proto-default "
    "proto-redir tlsuser tlspassword tlsauthtype create-file-mode parallel-max rate ip-tos vlan-priority ech "
    "ipfs-gateway proxy-service-name proxy-ciphers proxy-tls13-ciphers tls13-ciphers proxy-pinnedpubkey "
    "proxy-tlsuser proxy-tlspassword proxy-tlsauthtype proxy-cert-type proxy-key-type proxy-pass "
    "socks5-gssapi-service max-filesize keepalive-cnt"
)
_CURL_FLAGS = (
    "silent show-error location fail fail-with-body include head insecure verbose compressed http1.0 http1.1 "
    "http2 http2-prior-knowledge http3 http3-only get globoff ipv4 ipv6 junk-session-cookies list-only "
    "location-trusted netrc netrc-optional no-buffer no-keepalive no-sessionid progress-bar remote-name "
    "remote-name-all remote-header-name remote-time create-dirs raw tcp-nodelay tcp-fastopen ssl ssl-reqd tlsv1 "
    "tlsv1.0 tlsv1.1 tlsv1.2 tlsv1.3 sslv2 sslv3 anyauth basic digest ntlm ntlm-wb negotiate path-as-is post301 "
    "post302 post303 retry-all-errors retry-connrefused styled-output show-headers suppress-connect-headers "
    "trace-time trace-ids trace-config xattr disable disable-eprt disable-epsv ftp-create-dirs ftp-pasv "
    "ftp-pret ftp-skip-pasv-ip ftp-ssl-control crlf use-ascii append manual help version fail-early parallel "
    "parallel-immediate no-progress-meter compressed-ssh doh-insecure doh-cert-status false-start "
    "proxy-insecure proxy-anyauth proxy-basic proxy-digest proxy-negotiate proxy-ntlm proxytunnel proxy-http2 "
    "proxy-ssl-allow-beast proxy-ssl-auto-client-cert ssl-allow-beast ssl-no-revoke ssl-revoke-best-effort "
    "ssl-auto-client-cert cert-status tr-encoding ignore-content-length alpn npn sasl-ir socks5-basic "
    "socks5-gssapi socks5-gssapi-nec haproxy-protocol haproxy-clientip mptcp skip-existing remove-on-error "
    "clobber metalink form-escape ca-native proxy-ca-native digest-ie keepalive buffer sessionid progress-meter "
    "styled-output"
)
_CURL = grammar(
    short="b= c= d= e= m= o= r= t= u= w= x= y= z= A= C= D= E= F= H= K= P= Q= T= U= X= Y=",
    long=" ".join(f"{n}=" for n in _CURL_VALUED.split()) + " " + _CURL_FLAGS,
    aliases="o:output T:upload-file d:data F:form K:config b:cookie c:cookie-jar D:dump-header E:cert "
    "w:write-out H:header O:remote-name J:remote-header-name m:max-time",
    strict_short=False,
)
_CURL_SHORT_FLAGS = frozenset("#0123456aBfgGhiIjJkKlLMnNOpqRsSvVZ:")
_CURL_WRITES = ("output", "dump-header", "cookie-jar", "trace", "trace-ascii", "stderr", "libcurl", "etag-save",
                "hsts", "alt-svc")
_CURL_READS = ("upload-file", "cert", "key", "cacert", "capath", "crlfile", "netrc-file", "proxy-cert",
               "proxy-key", "proxy-cacert", "proxy-capath", "proxy-crlfile", "etag-compare", "hsts", "alt-svc",
               "config")
_CURL_AT_FILE = ("data", "data-ascii", "data-binary", "json", "header", "proxy-header", "write-out")


def _curl_value_files(name: str, value: str) -> list[str]:
    """Files an option value names through ``@FILE`` / ``name=@FILE`` / ``name=<FILE``."""
    if name in _CURL_AT_FILE:
        return [value[1:]] if value.startswith("@") and value != "@-" else []
    if name in ("data-urlencode", "variable", "url-query"):
        head = value.split("=", 1)[0]
        if "@" in head:
            path = value.split("@", 1)[1]
            return [path] if path != "-" else []
        return []
    if name == "form":
        _field, eq, content = value.partition("=")
        if eq and content[:1] in ("@", "<"):
            path = content[1:].split(";", 1)[0].strip('"')
            return [path] if path and path != "-" else []
        return []
    if name == "cookie":
        return [] if "=" in value or value == "-" else [value]
    if name == "pinnedpubkey":
        return [] if value.startswith("sha256//") else [value]
    return []


@family("curl")
def _curl(args: list[str]) -> Effects:
    p = parse_args(_CURL, args)
    e = Effects(side_effect="curl transfers data over the network")
    unknown = [u for u in p.unknown if not (u.startswith("--no-") and u[5:] in _CURL_FLAGS.split())]
    unknown += _unknown_letters(p, _CURL, _CURL_SHORT_FLAGS)
    if unknown:
        e.opaque = f"curl {unknown[0]} is not in the table"
    if p.has("config"):
        e.opaque = "curl -K reads options from a file"
    e.reads = [r for r in _values(p, *_CURL_READS)]
    for o in p.options:
        if o.value:
            e.reads += [(o.index, f) for f in _curl_value_files(o.name, o.value)]
    writes: list[Ref] = _values(p, *_CURL_WRITES)
    for o in p.values("write-out"):
        for m in re.finditer(r"%output\{>*([^}]*)\}", o.value or ""):
            writes.append((-1, m.group(1)))
    urls: list[Ref] = [(i, p.args[i]) for i in p.operands] + _values(p, "url")
    uploading = p.has("upload-file")
    for _i, u in urls:
        path = _file_url(u)
        if path is not None:
            e.reads.append((-1, path))
            if uploading:
                writes.append((-1, path))
    out_dir = next((v for _i, v in _values(p, "output-dir")), "")
    if p.has("remote-header-name"):
        e.into = [(-1, out_dir or ".")]
    elif p.has("remote-name", "remote-name-all"):
        for _i, u in urls:
            name = _url_name(u)
            if name is None:
                e.into = [(-1, out_dir or ".")]
            else:
                writes.append((-1, posixpath.join(out_dir, name) if out_dir else name))
    e.writes = writes
    return e


# -- wget -----------------------------------------------------------------------------------

_WGET = grammar(
    short="O= o= a= P= i= B= e= t= T= w= Q= l= A= R= D= I= X= U= n=",
    long="output-document= output-file= append-output= directory-prefix= input-file= post-file= body-file= "
    "body-data= post-data= load-cookies= save-cookies= config= execute= ca-certificate= certificate= "
    "private-key= ca-directory= crl-file= rejected-log= warc-file= warc-dedup= warc-header= warc-max-size= "
    "warc-tempdir= hsts-file= input-metalink= use-askpass= header= user= password= http-user= http-password= "
    "proxy-user= proxy-password= ftp-user= ftp-password= referer= user-agent= tries= timeout= dns-timeout= "
    "connect-timeout= read-timeout= wait= waitretry= quota= limit-rate= level= accept= reject= accept-regex= "
    "reject-regex= regex-type= domains= exclude-domains= include-directories= exclude-directories= cut-dirs= "
    "base= bind-address= bind-dns-address= dns-servers= local-encoding= remote-encoding= restrict-file-names= "
    "prefer-family= method= compression= default-page= backups= report-speed= secure-protocol= ciphers= "
    "pinnedpubkey= certificate-type= private-key-type= egd-file= random-file= progress= max-redirect= "
    "start-pos= password-file? "
    "quiet verbose no-verbose debug background continue timestamping no-clobber recursive mirror "
    "page-requisites convert-links convert-file-only backup-converted no-parent no-directories "
    "force-directories no-host-directories protocol-directories span-hosts relative follow-ftp "
    "no-check-certificate check-certificate https-only content-disposition trust-server-names server-response "
    "spider no-cookies keep-session-cookies ignore-length no-dns-cache no-proxy no-cache inet4-only inet6-only "
    "retry-connrefused retry-on-host-error retry-on-http-error= ask-password no-iri iri force-html delete-after "
    "no-http-keep-alive auth-no-challenge no-glob glob no-remove-listing preserve-permissions retr-symlinks "
    "passive-ftp no-passive-ftp show-progress no-config no-hsts xattr strict-comments version help ignore-case "
    "adjust-extension html-extension unlink no-netrc random-wait warc-cdx no-warc-compression "
    "no-warc-digests no-warc-keep-log content-on-error save-headers enable-feature= metalink-over-http "
    "metalink-index= keep-badhash preferred-location= unlink",
    aliases="O:output-document o:output-file a:append-output P:directory-prefix i:input-file e:execute "
    "r:recursive m:mirror p:page-requisites x:force-directories",
    strict_short=False,
)
_WGET_SHORT_FLAGS = frozenset("bcdFhkKLmNpqrSvVxEH46")


@family("wget")
def _wget(args: list[str]) -> Effects:
    p = parse_args(_WGET, args)
    e = Effects(side_effect="wget downloads files")
    unknown = list(p.unknown) + _unknown_letters(p, _WGET, _WGET_SHORT_FLAGS)
    if unknown:
        e.opaque = f"wget {unknown[0]} is not in the table"
    if p.has("config", "execute"):
        e.opaque = "wget --config / -e set options the analysis cannot see"
    if p.has("use-askpass"):
        e.runs_program = "wget --use-askpass runs a program"
    e.reads = _values(p, "input-file", "post-file", "body-file", "load-cookies", "ca-certificate", "certificate",
                      "private-key", "crl-file", "input-metalink", "config", "hsts-file")
    writes = _values(p, "output-file", "append-output", "save-cookies", "rejected-log", "hsts-file")
    writes += [(i, v + ".warc.gz") for i, v in _values(p, "warc-file")]
    documents = _values(p, "output-document")
    directory = next((v for _i, v in _values(p, "directory-prefix")), "")
    if documents:
        writes += documents
    elif not p.has("spider") and not any(o.value == "-" for o in p.values("output-document")):
        urls = [p.args[i] for i in p.operands]
        many = p.has("recursive", "mirror", "page-requisites", "content-disposition", "trust-server-names",
                     "input-file", "force-directories", "input-metalink")
        if many:
            e.into = [(-1, directory or ".")]
        for u in urls if not many else []:
            name = _url_name(u) or "index.html"
            writes.append((-1, posixpath.join(directory, name) if directory else name))
    e.writes = writes
    return e


# -- rsync, scp -----------------------------------------------------------------------------

_RSYNC = grammar(
    short="e= B= f= M= T= @=",
    long="rsh= rsync-path= exclude= exclude-from= include= include-from= files-from= filter= log-file= "
    "log-file-format= password-file= temp-dir= partial-dir= backup-dir= compare-dest= copy-dest= link-dest= "
    "suffix= chmod= chown= usermap= groupmap= timeout= contimeout= bwlimit= port= sockopts= out-format= "
    "max-size= min-size= max-delete= modify-window= block-size= compress-choice= zc= compress-level= zl= "
    "checksum-choice= cc= checksum-seed= info= debug= stderr= iconv= protocol= address= outbuf= "
    "remote-option= write-batch= only-write-batch= read-batch= early-input= stop-after= stop-at= "
    "skip-compress= copy-as= max-alloc= "
    "archive verbose compress recursive links perms times group owner devices specials human-readable "
    "progress partial dry-run update checksum hard-links acls xattrs sparse one-file-system quiet "
    "itemize-changes backup relative keep-dirlinks copy-links copy-dirlinks omit-dir-times omit-link-times "
    "whole-file prune-empty-dirs fuzzy cvs-exclude executability delete delete-before delete-during "
    "delete-delay delete-after delete-excluded delete-missing-args del remove-source-files remove-sent-files "
    "ignore-existing existing ignore-times size-only inplace append append-verify stats safe-links "
    "copy-unsafe-links munge-links numeric-ids force ignore-errors list-only from0 protect-args "
    "secluded-args old-args trust-sender mkpath delay-updates super fake-super atimes crtimes open-noatime "
    "preallocate no-motd blocking-io 8-bit-output ipv4 ipv6 version help dirs no-implied-dirs "
    "ignore-missing-args copy-devices write-devices hard-links no-whole-file no-compress no-perms no-times "
    "no-owner no-group no-links no-recursive no-relative no-dirs no-inc-recursive inc-recursive "
    "msgs2stderr no-msgs2stderr no-h no-v no-blocking-io no-D no-o no-g no-p no-t no-l no-r no-R no-W "
    "no-x no-c no-i no-u no-z no-s no-human-readable no-progress no-partial no-specials no-devices "
    "executability fsync",
    aliases="e:rsh T:temp-dir f:filter r:recursive a:archive",
    abbreviations=False,
    strict_short=False,
)
_RSYNC_SHORT_FLAGS = frozenset("avzrlptgoDhPnucHAXSxqibRKLkOJWmyCEFUN4680sdI")
_REMOTE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|[^/:]+::?)")


def _local(ref: Ref) -> bool:
    return not _REMOTE.match(ref[1])


@family("rsync")
def _rsync(args: list[str]) -> Effects:
    p = parse_args(_RSYNC, args)
    e = Effects(side_effect="rsync copies files")
    unknown = list(p.unknown) + _unknown_letters(p, _RSYNC, _RSYNC_SHORT_FLAGS)
    if unknown:
        e.opaque = f"rsync {unknown[0]} is not in the table"
    if p.has("rsh", "rsync-path"):
        e.runs_program = "rsync -e / --rsync-path runs a program"
    if p.has("files-from"):
        e.names_from = "rsync --files-from names the files to copy"
    e.reads = _values(p, "exclude-from", "include-from", "files-from", "password-file", "read-batch",
                      "early-input")
    writes = _values(p, "log-file", "temp-dir", "partial-dir", "backup-dir", "write-batch", "only-write-batch")
    ops = [(i, p.args[i]) for i in p.operands]
    sources, dest = (ops[:-1], ops[-1]) if len(ops) >= 2 else (ops, None)
    local_sources = [r for r in sources if _local(r)]
    e.reads += local_sources
    if p.has("recursive", "archive", "-d", "dirs"):
        e.trees = list(local_sources)
        e.follows_links = p.has("copy-links", "-L", "copy-dirlinks", "-k")
    if dest is not None and _local(dest):
        writes.append(dest)
        e.into_target = (dest, into_dir(dest, local_sources))
    if p.has("remove-source-files", "remove-sent-files"):
        writes += local_sources
    e.writes = writes
    return e


_SCP = grammar(short="c= D= F= i= J= l= o= P= S= X=", permute=False)
_SCP_SHORT_FLAGS = frozenset("12346ABCOpqRrsTv3")
_SSH_RUNS = re.compile(r"^\s*(?:ProxyCommand|LocalCommand|KnownHostsCommand|RemoteCommand)\s*[= ]", re.I)


@family("scp")
def _scp(args: list[str]) -> Effects:
    p = parse_args(_SCP, args)
    e = Effects(side_effect="scp copies files")
    unknown = _unknown_letters(p, _SCP, _SCP_SHORT_FLAGS)
    if unknown or p.unknown:
        e.opaque = f"scp {(unknown or p.unknown)[0]} is not in the table"
    if p.values("-S") or any(_SSH_RUNS.match(o.value or "") for o in p.values("-o")):
        e.runs_program = "scp -S / -o ProxyCommand runs a program"
    if p.values("-F"):
        e.runs_program = e.runs_program or "scp -F reads an ssh config that may run commands"
    e.reads = _values(p, "-F", "-i")
    ops = [(i, p.args[i]) for i in p.operands]
    sources, dest = (ops[:-1], ops[-1]) if len(ops) >= 2 else (ops, None)
    local_sources = [r for r in sources if _local(r) or r[1].startswith(("/", "./"))]
    e.reads += local_sources
    if p.has("-r"):
        e.trees = list(local_sources)
    if dest is not None and (_local(dest) or dest[1].startswith(("/", "./"))):
        e.writes = [dest]
        e.into_target = (dest, into_dir(dest, local_sources))
    return e


def scp_commands(args: list[str]) -> list[str]:
    """The program ``scp -S PROGRAM`` runs as its transport."""
    return [o.value for o in parse_args(_SCP, args).values("-S") if o.value]
