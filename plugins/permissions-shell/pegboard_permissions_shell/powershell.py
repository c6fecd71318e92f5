"""``PowerShell(...)`` rules: split a command into statements and canonicalise aliases.

PowerShell matching is case-insensitive and sees through the common aliases (``ri`` is
``Remove-Item``, ``gci`` is ``Get-ChildItem``), so a deny rule cannot be dodged by another
spelling. The splitter is deliberately small: statements split on ``;``, ``|``, ``&&``,
``||`` and newlines outside quotes; sub-expressions ``$(...)``, ``@(...)`` and script blocks
``{...}`` are checked as statements of their own. Anything it cannot follow (unbalanced
quotes or brackets, encoded commands, ``Invoke-Expression``) is never approved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ALIASES: dict[str, str] = {
    "ri": "Remove-Item", "rm": "Remove-Item", "del": "Remove-Item", "erase": "Remove-Item",
    "rd": "Remove-Item", "rmdir": "Remove-Item",
    "gci": "Get-ChildItem", "ls": "Get-ChildItem", "dir": "Get-ChildItem",
    "gc": "Get-Content", "cat": "Get-Content", "type": "Get-Content",
    "echo": "Write-Output", "write": "Write-Output",
    "cp": "Copy-Item", "copy": "Copy-Item", "cpi": "Copy-Item",
    "mv": "Move-Item", "move": "Move-Item", "mi": "Move-Item",
    "ni": "New-Item", "md": "New-Item", "mkdir": "New-Item",
    "sc": "Set-Content", "ac": "Add-Content",
    "iwr": "Invoke-WebRequest", "curl": "Invoke-WebRequest", "wget": "Invoke-WebRequest",
    "irm": "Invoke-RestMethod", "iex": "Invoke-Expression", "icm": "Invoke-Command",
    "cd": "Set-Location", "sl": "Set-Location", "chdir": "Set-Location",
    "pwd": "Get-Location", "gl": "Get-Location",
    "gi": "Get-Item", "si": "Set-Item", "gp": "Get-ItemProperty", "sp": "Set-ItemProperty",
    "ps": "Get-Process", "gps": "Get-Process", "kill": "Stop-Process", "spps": "Stop-Process",
    "saps": "Start-Process", "start": "Start-Process",
    "sls": "Select-String", "select": "Select-Object", "where": "Where-Object", "?": "Where-Object",
    "foreach": "ForEach-Object", "%": "ForEach-Object", "sort": "Sort-Object", "measure": "Measure-Object",
    "cls": "Clear-Host", "clear": "Clear-Host", "h": "Get-History", "history": "Get-History",
    "rni": "Rename-Item", "ren": "Rename-Item", "rp": "Remove-ItemProperty", "sv": "Set-Variable",
    "set": "Set-Variable", "gv": "Get-Variable", "rv": "Remove-Variable", "ipmo": "Import-Module",
    "sal": "Set-Alias", "nal": "New-Alias", "gal": "Get-Alias", "tee": "Tee-Object",
    "gcm": "Get-Command", "gm": "Get-Member", "ft": "Format-Table", "fl": "Format-List",
    "ogv": "Out-GridView", "diff": "Compare-Object", "compare": "Compare-Object",
}
_CANON = {k.lower(): v for k, v in ALIASES.items()}

#: Statements that run code the splitter cannot see: never approved by a prefix rule.
DYNAMIC_COMMANDS = frozenset({"invoke-expression", "invoke-command", "start-process", "start-job",
                              "powershell", "pwsh", "powershell.exe", "pwsh.exe", "cmd", "cmd.exe",
                              "&", ".", "set-alias", "new-alias"})


@dataclass
class PsScript:
    statements: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def canonical(statement: str) -> str:
    """The statement with its command word replaced by the cmdlet an alias stands for."""
    words = statement.split(None, 1)
    if not words:
        return ""
    head = words[0]
    canon = _CANON.get(head.lower(), head)
    return canon + (" " + " ".join(words[1].split()) if len(words) > 1 else "")


def split(command: str, depth: int = 0) -> PsScript:
    """Statements of a PowerShell command (nested ones included); never raises."""
    out = PsScript()
    if depth > 16:
        out.problems.append("nested too deeply")
        return out
    cur: list[str] = []
    i = 0
    n = len(command)
    while i < n:
        ch = command[i]
        if ch == "'":
            j = i + 1
            while j < n:
                if command[j] == "'" and j + 1 < n and command[j + 1] == "'":
                    j += 2
                    continue
                if command[j] == "'":
                    break
                j += 1
            if j >= n:
                out.problems.append("unterminated quote")
            cur.append(command[i:j + 1])
            i = j + 1
            continue
        if ch == '"':
            j = i + 1
            while j < n and command[j] != '"':
                if command[j] == "`":
                    j += 1
                elif command[j] == "$" and j + 1 < n and command[j + 1] == "(":
                    end = _matching(command, j + 1)
                    if end < 0:
                        out.problems.append("unbalanced sub-expression")
                        break
                    _merge(out, split(command[j + 2:end], depth + 1))
                    j = end
                j += 1
            if j >= n:
                out.problems.append("unterminated quote")
            cur.append(command[i:j + 1])
            i = j + 1
            continue
        if ch in "({" or (ch in "$@" and i + 1 < n and command[i + 1] == "("):
            start = i + 1 if ch in "({" else i + 2
            end = _matching(command, start - 1)
            if end < 0:
                out.problems.append("unbalanced brackets")
                cur.append(command[i:])
                break
            _merge(out, split(command[start:end], depth + 1))
            cur.append(command[i:end + 1])
            i = end + 1
            continue
        if ch in ";|\n\r" or command.startswith("&&", i):
            _flush(out, cur)
            cur = []
            i += 2 if command.startswith(("&&", "||"), i) else 1
            continue
        if ch == "`" and i + 1 < n:
            cur.append(command[i:i + 2])
            i += 2
            continue
        cur.append(ch)
        i += 1
    _flush(out, cur)
    return out


def _merge(out: PsScript, inner: PsScript) -> None:
    out.statements.extend(inner.statements)
    out.problems.extend(inner.problems)


def _flush(out: PsScript, cur: list[str]) -> None:
    text = "".join(cur).strip()
    if text:
        out.statements.append(text)


def _matching(text: str, open_at: int) -> int:
    pairs = {"(": ")", "{": "}"}
    opener = text[open_at]
    closer = pairs.get(opener)
    if closer is None:
        return -1
    depth = 0
    i = open_at
    quote = ""
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
            elif ch == "`":
                i += 1
        elif ch in "'\"":
            quote = ch
        elif ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


#: Cmdlets (canonical, lower case) that read the files their arguments name.
FILE_READERS = frozenset({
    "get-content", "select-string", "import-csv", "import-clixml", "get-filehash", "format-hex",
    "copy-item", "move-item", "import-module", "import-powershelldatafile", "get-item", "get-childitem",
})
#: Cmdlets that write (or delete) the files their arguments name.
FILE_WRITERS = frozenset({
    "set-content", "add-content", "out-file", "new-item", "remove-item", "copy-item", "move-item",
    "rename-item", "clear-content", "tee-object", "export-csv", "export-clixml", "set-item",
})
_REDIRECT = re.compile(r"^(?:[1-6*]?>>?|>>?)(.*)$")


def arguments(statement: str) -> list[tuple[str, str]]:
    """``(kind, value)`` for each argument after the command word: ``arg`` or ``write``.

    Quotes are removed; parameter names (``-Path``) are skipped, ``-Path:value`` yields the
    value; a redirect (``> file``, ``2>> file``) yields its target as ``write``.
    """
    tokens = _tokens(statement)
    out: list[tuple[str, str]] = []
    pending_redirect = False
    for tok in tokens[1:]:
        if pending_redirect:
            out.append(("write", tok))
            pending_redirect = False
            continue
        m = _REDIRECT.match(tok)
        if m:
            if m.group(1):
                out.append(("write", m.group(1)))
            else:
                pending_redirect = True
            continue
        if tok.startswith("-"):
            if ":" in tok:
                out.append(("arg", tok.split(":", 1)[1]))
            continue
        out.append(("arg", tok))
    return out


def _tokens(statement: str) -> list[str]:
    tokens: list[str] = []
    cur: list[str] = []
    quote = ""
    i = 0
    while i < len(statement):
        ch = statement[i]
        if quote:
            if ch == quote:
                quote = ""
            elif ch == "`" and quote == '"' and i + 1 < len(statement):
                i += 1
                cur.append(statement[i])
            else:
                cur.append(ch)
        elif ch in "'\"":
            quote = ch
        elif ch.isspace():
            if cur:
                tokens.append("".join(cur))
                cur = []
        elif ch == "`" and i + 1 < len(statement):
            i += 1
            cur.append(statement[i])
        else:
            cur.append(ch)
        i += 1
    if cur:
        tokens.append("".join(cur))
    return tokens
