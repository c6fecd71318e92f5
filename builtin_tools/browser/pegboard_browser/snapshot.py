"""Page snapshots with refs an ``act`` can name.

One walk over the page's DOM (run in the page) gives each element its role and accessible
name and numbers the elements a model may act on; the number is kept on the element as
``data-pegboard-ref``, so a later ``act`` finds it again. The ``ai`` format lists them with
numeric refs (``[12]``) and the page's text; the ``aria`` format is the role tree with refs
such as ``e12``, narrowed by ``interactive``, ``compact``, ``depth`` and ``selector``. Each
snapshot renumbers the page: refs from an older one no longer resolve.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

REF_ATTRIBUTE = "data-pegboard-ref"
_REF = re.compile(r"^e?([0-9]{1,7})$")

WALK_JS = r"""
(opts) => {
  const ATTR = opts.attr;
  for (const el of document.querySelectorAll('[' + ATTR + ']')) el.removeAttribute(ATTR);
  const root = opts.selector ? document.querySelector(opts.selector) : document.body;
  if (!root) return {error: 'no element matches selector ' + opts.selector};
  const ROLES = {A: 'link', BUTTON: 'button', SELECT: 'combobox', TEXTAREA: 'textbox', IMG: 'img',
    UL: 'list', OL: 'list', LI: 'listitem', NAV: 'navigation', MAIN: 'main', FORM: 'form',
    TABLE: 'table', TR: 'row', TD: 'cell', TH: 'columnheader', IFRAME: 'iframe', DIALOG: 'dialog',
    HEADER: 'banner', FOOTER: 'contentinfo', ASIDE: 'complementary', P: 'paragraph', LABEL: 'label',
    SUMMARY: 'button', OPTION: 'option', H1: 'heading', H2: 'heading', H3: 'heading', H4: 'heading',
    H5: 'heading', H6: 'heading', SECTION: 'region', ARTICLE: 'article'};
  const INPUTS = {checkbox: 'checkbox', radio: 'radio', submit: 'button', button: 'button', reset: 'button',
    image: 'button', file: 'button', range: 'slider', number: 'spinbutton', search: 'searchbox'};
  const INTERACTIVE = new Set(['link', 'button', 'checkbox', 'radio', 'textbox', 'combobox', 'searchbox',
    'slider', 'spinbutton', 'switch', 'tab', 'menuitem', 'option', 'listbox']);
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK']);
  const clip = (s) => { s = (s || '').replace(/\s+/g, ' ').trim(); return s.length > 100 ? s.slice(0, 99) + '…' : s; };
  const roleOf = (el) => {
    const explicit = el.getAttribute('role');
    if (explicit) return explicit.split(' ')[0];
    if (el.tagName === 'A') return el.hasAttribute('href') ? 'link' : 'generic';
    if (el.tagName === 'INPUT') { const t = (el.getAttribute('type') || 'text').toLowerCase();
      if (t === 'hidden') return null; return INPUTS[t] || 'textbox'; }
    if (el.isContentEditable && el.parentElement && !el.parentElement.isContentEditable) return 'textbox';
    return ROLES[el.tagName] || 'generic';
  };
  const nameOf = (el, role) => {
    const label = el.getAttribute('aria-label'); if (label) return clip(label);
    const by = el.getAttribute('aria-labelledby');
    if (by) return clip(by.split(/\s+/).map(id => (document.getElementById(id) || {}).textContent || '').join(' '));
    if (el.tagName === 'IMG') return clip(el.getAttribute('alt') || el.getAttribute('title'));
    if (el.labels && el.labels.length) return clip(Array.from(el.labels).map(l => l.textContent).join(' '));
    if (el.tagName === 'INPUT' && ['submit', 'button', 'reset'].includes(el.type)) return clip(el.value);
    if (['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider'].includes(role))
      return clip(el.getAttribute('placeholder') || el.getAttribute('title'));
    if (['link', 'button', 'heading', 'option', 'checkbox', 'radio', 'tab', 'menuitem', 'listitem', 'cell',
         'columnheader', 'label', 'paragraph'].includes(role)) return clip(el.innerText || el.textContent);
    return clip(el.getAttribute('title'));
  };
  const hidden = (el) => { const s = getComputedStyle(el);
    return s.display === 'none' || s.visibility === 'hidden' || el.hidden ||
      el.getAttribute('aria-hidden') === 'true'; };
  const out = []; let n = 0;
  const walk = (el, depth) => {
    if (SKIP.has(el.tagName) || hidden(el)) return;
    if (opts.depth !== null && depth > opts.depth) return;
    const role = roleOf(el); if (role === null) return;
    const interactive = INTERACTIVE.has(role) || el.hasAttribute('onclick') ||
      (el.hasAttribute('tabindex') && el.tabIndex >= 0 && role !== 'generic' ) || role === 'iframe';
    const name = nameOf(el, role);
    const item = {depth, role, name};
    if (interactive) { n += 1; el.setAttribute(ATTR, String(n)); item.ref = n; }
    if (role === 'heading') item.level = Number(el.tagName.slice(1)) || Number(el.getAttribute('aria-level')) || 2;
    if (role === 'link') item.url = el.getAttribute('href');
    if (['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider'].includes(role) && 'value' in el && el.value)
      item.value = clip(el.value);
    if ((role === 'checkbox' || role === 'radio') && 'checked' in el) item.checked = !!el.checked;
    if (el.disabled) item.disabled = true;
    const leaf = ['link', 'button', 'heading', 'textbox', 'option', 'paragraph', 'label', 'cell', 'columnheader',
      'img', 'combobox', 'checkbox', 'radio', 'listitem'].includes(role) &&
      !el.querySelector('a,button,input,select,textarea,[role]');
    const keep = !opts.interactive || interactive;
    const structural = role !== 'generic' || name || interactive;
    if (keep && (structural || !opts.compact)) out.push(item);
    let text = '';
    if (!leaf) {
      for (const child of el.childNodes) {
        if (child.nodeType === 3) { text += child.textContent; }
        else if (child.nodeType === 1) walk(child, (keep && (structural || !opts.compact)) ? depth + 1 : depth);
      }
      text = clip(text);
      if (text && !opts.interactive) out.push({depth: depth + 1, role: 'text', name: text});
    }
    if (out.length > opts.maxNodes) throw new Error('too many nodes');
  };
  try { walk(root, 0); } catch (e) { return {items: out, refs: n, cut: true}; }
  return {items: out, refs: n, cut: false};
}
"""


@dataclass(frozen=True)
class SnapshotOptions:
    format: str = "ai"
    interactive: bool = False
    compact: bool = False
    depth: int | None = None
    selector: str | None = None
    max_nodes: int = 5000


def parse_ref(ref: str | int) -> int | None:
    """The element number of a ref from either format (``12`` or ``e12``), or ``None``."""
    m = _REF.match(str(ref).strip())
    return int(m.group(1)) if m else None


def ref_selector(number: int) -> str:
    return f'[{REF_ATTRIBUTE}="{number}"]'


def walk_options(opts: SnapshotOptions) -> dict[str, Any]:
    compact = opts.compact or opts.format == "ai"
    return {"attr": REF_ATTRIBUTE, "selector": opts.selector, "interactive": opts.interactive,
            "compact": compact, "depth": opts.depth, "maxNodes": opts.max_nodes}


def render(items: list[dict[str, Any]], fmt: str) -> str:
    """The walk's items as indented lines: ``- role "name" [12]`` (ai) or ``[ref=e12]`` (aria)."""
    lines = []
    for item in items:
        role, name = item.get("role", "generic"), item.get("name") or ""
        indent = "  " * int(item.get("depth", 0))
        if role == "text":
            lines.append(f"{indent}- text: {name}")
            continue
        parts = [f"{indent}- {role}"]
        if name:
            parts.append(f'"{name}"')
        if "level" in item:
            parts.append(f"[level={item['level']}]")
        if item.get("checked") is not None:
            parts.append("[checked]" if item["checked"] else "[unchecked]")
        if item.get("disabled"):
            parts.append("[disabled]")
        if "ref" in item:
            parts.append(f"[{item['ref']}]" if fmt == "ai" else f"[ref=e{item['ref']}]")
        line = " ".join(parts)
        if "value" in item:
            line += f": {item['value']}"
        if item.get("url"):
            line += f" -> {item['url']}"
        lines.append(line)
    return "\n".join(lines)


__all__ = ["REF_ATTRIBUTE", "WALK_JS", "SnapshotOptions", "parse_ref", "ref_selector", "render", "walk_options"]
