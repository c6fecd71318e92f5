"""The web tools' limits and their HTML converter, measured on this machine.

    python benchmarks/bench_web.py [--rounds N] [--body-mb N] [--cap-mb N]

1. Converter throughput on the saved pages in ``tests/builtin/web/pages``: the chosen
   pipeline (readable content + ``html-to-markdown``) against ``markdownify`` and
   ``html2text`` when they are installed (``pip install markdownify html2text``), in MB of
   HTML per second, with the share of boilerplate phrases each one leaves in its output.
2. Memory: WebFetch of a response of ``--body-mb`` (50) MB with a body cap of ``--cap-mb``
   (10) MB, in a fresh process, served from another process. Goal: the peak resident size
   grows by no more than the cap plus 10 MB.
3. Coalescing: 20 concurrent WebFetch calls of one URL. Goal: the server sees one request.

Figures of one run on the development machine (Python 3.11, x86-64; "+main" = the library
fed the page's <main>/<article> only, the pipeline's first step):

    converter             MB/s   boilerplate phrases left (of 12)
    pipeline (chosen)      3.9   0   (readable content + html-to-markdown with boilerplate selectors)
    html-to-markdown       3.9   8
    markdownify            0.4  10
    markdownify+main       0.4   3
    html2text              0.9  11
    html2text+main         1.1   3
    50 MB body, 10 MB cap: peak RSS +18.1 MB (goal <= 20 MB)
    20 concurrent fetches of one URL: 1 request reached the server
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "tests" / "builtin" / "web" / "pages"
sys.path.insert(0, str(ROOT))

#: Phrases that belong to the pages' chrome, not their content.
BOILERPLATE = ("Keyboard shortcuts", "Press `?` to show this help", "We use cookies", "Buy boats now",
               "Sign up for our newsletter", "Most read", "Archive", "Share", "Written by hand",
               "Print this book", "Coastal Gazette</", "Search")


def converters() -> dict[str, Callable[[str], str]]:
    """The chosen pipeline, and each library alone on the whole page and on the readable part."""
    import html_to_markdown as h2m

    from pegboard_toolkit.webcontent import html_to_markdown, readable_html

    found: dict[str, Callable[[str], str]] = {
        "pipeline (chosen)": lambda html: html_to_markdown(html, "https://docs.example/").text,
        "html-to-markdown": lambda html: h2m.convert(html).content or "",
    }
    try:
        import markdownify

        found["markdownify"] = lambda html: markdownify.markdownify(html)
        found["markdownify+main"] = lambda html: markdownify.markdownify(readable_html(html))
    except ImportError:
        pass
    try:
        import html2text

        def h2t(html: str) -> str:
            h = html2text.HTML2Text(baseurl="https://docs.example/")
            h.body_width = 0
            return h.handle(html)

        found["html2text"] = h2t
        found["html2text+main"] = lambda html: h2t(readable_html(html))
    except ImportError:
        pass
    return found


def bench_converters(rounds: int) -> None:
    pages = {p.name: p.read_bytes().decode("utf-8", "replace") for p in sorted(PAGES.glob("*.html"))}
    total_mb = sum(len(h.encode()) for h in pages.values()) / 1e6
    print(f"1. converters on {len(pages)} saved pages ({total_mb:.2f} MB), {rounds} rounds")
    print(f"   {'converter':<20}{'MB/s':>8}{'boilerplate left':>20}")
    for name, convert in converters().items():
        times = []
        outputs = {}
        for _ in range(rounds):
            start = time.perf_counter()
            for page, html in pages.items():
                outputs[page] = convert(html)
            times.append(time.perf_counter() - start)
        text = "\n".join(outputs.values())
        left = sum(1 for phrase in BOILERPLATE if phrase in text)
        print(f"   {name:<20}{total_mb / statistics.median(times):>8.1f}{f'{left}/{len(BOILERPLATE)}':>20}")


SERVER = textwrap.dedent("""
    import sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    size = int(sys.argv[1])
    chunk = b"<p>" + b"the quick brown fox jumps over the lazy dog " * 20 + b"</p>\\n"
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def log_message(self, *a): pass
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            sent = 0
            try:
                while sent < size:
                    part = chunk[: size - sent]
                    self.wfile.write(part)
                    sent += len(part)
            except (BrokenPipeError, ConnectionResetError):
                pass
    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()
""")

CLIENT = textwrap.dedent("""
    import json, resource, sys
    sys.path.insert(0, sys.argv[3])
    from tests.builtin.web.support import board
    url, cap = sys.argv[1], int(sys.argv[2])
    def rss_mb():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    pb = board(fetch={"maxBytes": cap, "maxCharsCap": 50000})
    small = board(fetch={"maxBytes": 64 * 1024, "maxCharsCap": 50000})
    small.call_sync("WebFetch", {"url": url + "?warm"})  # imports and first-use costs, a 64 KiB body
    before = rss_mb()
    result = pb.call_sync("WebFetch", {"url": url})
    print(json.dumps({"before": before, "after": rss_mb(), "error": result.is_error,
                      "chars": result.metadata.get("chars")}))
""")


def bench_memory(body_mb: int, cap_mb: int) -> None:
    size, cap = body_mb * 1024 * 1024, cap_mb * 1024 * 1024
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(size)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        out = subprocess.run([sys.executable, "-c", CLIENT, f"http://127.0.0.1:{port}/big", str(cap), str(ROOT)],
                             capture_output=True, text=True, check=True, env={**os.environ})
        data = json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        server.terminate()
        server.wait()
    grown = data["after"] - data["before"]
    goal = cap_mb + 10
    verdict = "ok" if grown <= goal else "OVER"
    print(f"2. {body_mb} MB body, {cap_mb} MB cap: peak RSS {data['before']:.0f} -> {data['after']:.0f} MB "
          f"(+{grown:.1f} MB, goal <= {goal} MB: {verdict}); text {data['chars']:,} chars")


def bench_coalescing() -> None:
    from tests.builtin.web.server import LocalServer, Reply
    from tests.builtin.web.support import board

    with LocalServer() as server:
        server.route("/page", Reply(body=b"<html><body><main><p>one</p></main></body></html>", delay=0.3))
        pb = board()

        async def twenty() -> None:
            await asyncio.gather(*(pb.call("WebFetch", {"url": server.url("/page")}) for _ in range(20)))

        asyncio.run(twenty())
        hits = server.hits("/page")
    print(f"3. 20 concurrent fetches of one URL: {hits} request(s) reached the server (goal: 1)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--body-mb", type=int, default=50)
    parser.add_argument("--cap-mb", type=int, default=10)
    args = parser.parse_args()
    bench_converters(args.rounds)
    bench_memory(args.body_mb, args.cap_mb)
    bench_coalescing()


if __name__ == "__main__":
    main()
