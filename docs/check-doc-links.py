#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The docs link: fails on
#
# (a) gtk-doc references left in the doc comments of hp-protocols/:
#     #HpFoo, #HpFoo:prop, #HpFoo::signal, #GError, #gint (any #name),
#     hp_foo() / g_foo() / json_foo() / HP_FOO() calls, %HP_FOO constants and
#     bare HpFooClass.vfunc / HpFooClass::vfunc, outside gi-docgen links,
#     code spans, code blocks and annotations;
# (b) Hp names that link nowhere in the generated HTML: prose (text and
#     inline code that is just a symbol) that names an Hp type (HpFoo,
#     HpFoo:prop, HpFoo::signal, HpFooClass.vfunc) or an hp_ function
#     (hp_foo(), or a bare hp_foo that is a function of the GIR) outside an
#     <a> element.  Not checked, since names are there by nature or by
#     design: code blocks and declarations (<pre>), the members of class
#     structures, the "Type:" of properties, arguments and return values
#     (gi-docgen's own words), the page headers and the headings of the
#     reference pages, the sidebar, and the one-paragraph summaries that
#     gi-docgen renders without links in lists (the index, the
#     method/property/signal lists, the inherited members): each is the
#     first paragraph of a description that is checked on its own page.
#     A function that has no page (C-only or private) may be inline code;
# (c) public symbols of the GIR without a version (Since:), or with one
#     below 1.0;
# (d) links to another namespace whose documentation the urlmap does not
#     locate, or on a page that does not load the urlmap (they would lead
#     nowhere);
# (e) gi-docgen links in the doc comments (rendered or not) and the guides
#     that the GIR and the GIRs it includes do not resolve, with the file
#     and line (a symbol renamed after the link was written).
#
# Usage: check-doc-links.py SOURCE_ROOT GIR HTML_DIR URLMAP
#
# URLMAP is the name of the urlmap_file of the gi-docgen configuration, read
# in HTML_DIR where gi-docgen copies it.

import html
import html.parser
import os
import re
import sys
import xml.etree.ElementTree as ET

CORE = '{http://www.gtk.org/introspection/core/1.0}'
C_NS = '{http://www.gtk.org/introspection/c/1.0}'
GLIB = '{http://www.gtk.org/introspection/glib/1.0}'

MAX_SHOWN = int(os.environ.get("CHECK_DOC_LINKS_SHOW", "40"))


# -- the GIR -------------------------------------------------------------------

def load_gir(path):
    root = ET.parse(path).getroot()
    ns = root.find(CORE + 'namespace')
    prefix = (ns.get(C_NS + 'identifier-prefixes') or '').split(',')[0]
    types = set()
    funcs = set()
    symbols = []            # (description, version)
    containers = ('class', 'interface', 'record', 'union', 'enumeration',
                  'bitfield', 'callback', 'constant', 'alias')
    for el in ns:
        tag = el.tag.replace(CORE, '')
        name = el.get('name')
        ctype = el.get(C_NS + 'type') or el.get(GLIB + 'type-name')
        if tag in containers and ctype:
            types.add(ctype)
        struct_for = el.get(GLIB + 'is-gtype-struct-for')
        if tag in containers:
            # A class structure is public when it is documented (the
            # "Class structure" of its class); those of final types are not
            if not (struct_for and el.find(CORE + 'doc') is None):
                symbols.append((f'{tag} {name} ({ctype})', el.get('version')))
        elif tag in ('function', 'function-macro'):
            funcs.add(el.get(C_NS + 'identifier'))
            symbols.append((f'{tag} {el.get(C_NS + "identifier")}', el.get('version')))
        for child in el:
            ctag = child.tag.replace(CORE, '').replace(GLIB, 'glib:')
            cname = child.get('name')
            cid = child.get(C_NS + 'identifier')
            if ctag in ('constructor', 'method', 'function'):
                funcs.add(cid)
                symbols.append((f'{ctag} {cid}', child.get('version')))
            elif ctag in ('virtual-method', 'property', 'glib:signal'):
                sep = {'virtual-method': '.', 'property': ':', 'glib:signal': '::'}[ctag]
                owner = ctype
                if ctag == 'virtual-method':
                    owner = prefix + (el.get(GLIB + 'type-struct') or f'{name}Class')
                symbols.append((f'{ctag} {owner}{sep}{cname}', child.get('version')))
    return types, funcs, symbols


TYPE_KINDS = {'class': 'class', 'interface': 'iface', 'record': 'struct',
              'union': 'struct', 'enumeration': 'enum', 'bitfield': 'flags',
              'callback': 'callback', 'alias': 'alias', 'constant': 'const'}


def link_targets(path, dirs, targets=None, seen=None):
    """The endpoints gi-docgen links resolve to, by fragment, for the GIR
    and the GIRs it includes (those not found are left out)."""
    if targets is None:
        targets = {'namespaces': set()}
        seen = set()
    root = ET.parse(path).getroot()
    for inc in root.findall(CORE + 'include'):
        key = f"{inc.get('name')}-{inc.get('version')}"
        if key in seen:
            continue
        seen.add(key)
        for d in dirs:
            p = os.path.join(d, key + '.gir')
            if os.path.exists(p):
                link_targets(p, dirs, targets, seen)
                break
    ns = root.find(CORE + 'namespace')
    nsname = ns.get('name')
    targets['namespaces'].add(nsname)
    add = lambda frag, ep: targets.setdefault(frag, set()).add(ep)
    for el in ns:
        tag = el.tag.replace(CORE, '')
        name = el.get('name')
        if tag in ('function', 'function-macro'):
            add('func', f'{nsname}.{name}')
            add('id', el.get(C_NS + 'identifier'))
            continue
        if tag not in TYPE_KINDS:
            continue
        kind = TYPE_KINDS[tag]
        if tag == 'enumeration' and el.get(GLIB + 'error-domain'):
            kind = 'error'
        ep = f'{nsname}.{name}'
        add(kind, ep)
        add('type', ep)
        for child in el:
            ctag = child.tag.replace(CORE, '').replace(GLIB, 'glib:')
            cname = child.get('name')
            if ctag == 'constructor':
                add('ctor', f'{ep}.{cname}')
            elif ctag == 'method':
                add('method', f'{ep}.{cname}')
            elif ctag == 'function':
                add('func', f'{ep}.{cname}')
            elif ctag == 'virtual-method':
                add('vfunc', f'{ep}.{cname}')
            elif ctag == 'property':
                add('property', f'{ep}:{cname}')
            elif ctag == 'glib:signal':
                add('signal', f'{ep}::{cname}')
            if ctag in ('constructor', 'method', 'function'):
                add('id', child.get(C_NS + 'identifier'))
    return targets


LINK_RE = re.compile(r'(?:\[[\w\s,\-_:]+\])?\[`?(\w+)@([\w\-_:.]+?)`?\]')


def link_resolves(frag, ep, targets, main_ns):
    """Resolves a link as gi-docgen does: the namespace is optional."""
    if frag == 'id':
        return ep in targets.get('id', ())
    namespaces = targets['namespaces']
    if frag in ('property', 'signal'):
        sep = '::' if frag == 'signal' else ':'
        owner, _, member = ep.partition(sep)
        if '.' not in owner:
            owner = f'{main_ns}.{owner}'
        ns = owner.split('.')[0]
        full = f'{owner}{sep}{member.replace("_", "-")}'
    else:
        parts = ep.split('.')
        if frag == 'func':
            has_ns = len(parts) >= 2 and (parts[0] in namespaces or len(parts) == 3)
        else:
            has_ns = len(parts) > {'method': 2, 'ctor': 2, 'vfunc': 2}.get(frag, 1)
        if not has_ns:
            parts = [main_ns] + parts
        ns = parts[0]
        full = '.'.join(parts)
    # a namespace the GIR does not include: gi-docgen writes the text
    # without a link
    return ns in namespaces and full in targets.get(frag, ())


def check_links(rel, line0, text, targets, main_ns):
    found = []
    for m in LINK_RE.finditer(text):
        frag, ep = m.group(1), m.group(2)
        if not link_resolves(frag, ep, targets, main_ns):
            line = line0 + text.count('\n', 0, m.start())
            found.append(('broken link', f'{rel}:{line}', m.group(0)))
    return found


def version_ok(v):
    if v is None:
        return False
    try:
        parts = tuple(int(x) for x in v.split('.'))
    except ValueError:
        return False
    return parts >= (1, 0)


# -- (a) doc comments ------------------------------------------------------------

def doc_comments(src):
    """Yields (line, text) of each /** ... */ comment, skipping strings and
    other comments."""
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c in '"\'':
            i += 1
            while i < n and src[i] != c and src[i] != '\n':
                i += 2 if src[i] == '\\' else 1
            i += 1
        elif src.startswith('//', i):
            j = src.find('\n', i)
            i = n if j < 0 else j
        elif src.startswith('/*', i):
            j = src.find('*/', i + 2)
            j = n if j < 0 else j + 2
            if src.startswith('/**', i) and not re.match(r'/\*\*[*</]', src[i:i + 4]):
                yield src.count('\n', 0, i) + 1, src[i:j]
            i = j
        else:
            i += 1


ANNOTATION_RE = re.compile(
    r'\((?:allow-none|array|attributes|closure|destroy|element-type|in|inout|'
    r'nullable|optional|out|rename-to|scope|skip|transfer|type|not|virtual|'
    r'method|constructor|setter|getter|default|emitter|value|foreign|'
    r'caller-allocates|callee-allocates|finish-func|sync-func|async-func)\b'
    r'[^()\n]*(?:\([^()\n]*\)[^()\n]*)*\)')
PROTECTED_RE = re.compile(
    r'(`+)(?:(?!\1)[^`\n]|\n(?![ \t]*\n))+?\1'       # code spans
    r'|(?:\[[\w\s,\-_:]+\])?\[`?\w+@[\w\-_:.]+`?\]'  # gi-docgen links
    r'|\[[^\]\n]*\]\([^)\s]*\)'                     # Markdown links
    r'|<[^<>\n]*>'                                  # HTML, autolinks
    r'|https?://[^\s)>\]]+'
    r'|' + ANNOTATION_RE.pattern)
GTKDOC_RE = re.compile(r'''
    (?<![\w\\])\#[A-Za-z_]\w*(?:::?[\w-]+|\.\w+)?            # #HpFoo, #GError, #gint
  | (?<![\w.])(?:_?hp_|g_|json_|HP_)\w*[ ]?\(\)              # hp_foo(), g_foo()
  | (?<![\w%])%HP_[A-Z0-9_]+                                 # %HP_ERROR_CONFIG
  | (?<![\w.\#])Hp\w*(?:Class|Interface)(?:::|\.)[a-z_]\w*   # HpFooClass.vfunc
''', re.X)


def check_sources(root, targets, main_ns):
    problems = []
    links = []
    top = os.path.join(root, 'hp-protocols')
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for f in sorted(filenames):
            if not (f.endswith('.c') or f.endswith('.h') or f.endswith('.h.in')):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            src = open(path, encoding='utf-8').read()
            for line0, comment in doc_comments(src):
                problems += check_comment(rel, line0, comment)
                links += check_links(rel, line0, comment, targets, main_ns)
    docs = os.path.join(root, 'docs')
    for f in sorted(os.listdir(docs)):
        if f.endswith('.md'):
            text = open(os.path.join(docs, f), encoding='utf-8').read()
            # fenced code blocks are no prose
            text = re.sub(r'(?ms)^(```|~~~).*?^\1', lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text)
            links += check_links(f'docs/{f}', 1, text, targets, main_ns)
    return problems, links


def check_comment(rel, line0, comment):
    lines = comment.split('\n')
    texts = []
    for l in lines:
        m = re.match(r'^\s*(?:/\*\*|\*/|\*(?!/) ?)?(.*?)(?:\*/)?$', l)
        texts.append(m.group(1))
    # the identifier line: the symbol's own name and annotations
    first = next((k for k, t in enumerate(texts) if t.strip()), None)
    in_block = False
    prose = []
    for k, t in enumerate(texts):
        if k == first or (k == 0 and not t.strip()):
            prose.append('')
            continue
        if in_block:
            if re.match(r'^\s*\]\|', t) or re.match(r'^\s*(```|~~~)', t):
                in_block = False
            prose.append('')
            continue
        if re.match(r'^\s*\|\[', t):
            in_block = not re.search(r'\]\|\s*$', t)
            prose.append('')
            continue
        if re.match(r'^\s*(```|~~~)', t):
            in_block = True
            prose.append('')
            continue
        if re.match(r'^\s*(Since|Stability)\s*:', t, re.I):
            prose.append('')
            continue
        prose.append(t)
    text = '\n'.join(prose)
    # blank out what is not prose, keeping the offsets
    text = PROTECTED_RE.sub(lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text)
    found = []
    for m in GTKDOC_RE.finditer(text):
        line = line0 + text.count('\n', 0, m.start())
        ref = m.group(0).strip()
        if ref.startswith('#'):
            kind = '#type' if re.match(r'#\w+$', ref) else '#type:member'
        elif ref.startswith('%'):
            kind = '%constant'
        elif ref.endswith(')'):
            kind = 'function()'
        else:
            kind = 'Class.vfunc'
        found.append((kind, f'{rel}:{line}', ref))
    return found


# -- (b) the HTML ------------------------------------------------------------------

VOID = {'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link',
        'meta', 'source', 'track', 'wbr'}
SKIP_TAGS = {'head', 'script', 'style', 'nav', 'pre', 'a', 'header', 'title'}
HEADINGS = {'h1', 'h2', 'h3', 'h4', 'h5', 'h6'}

NAME_RE = re.compile(r'(?<![\w.])(Hp[A-Z]\w*(?:(?:::?|\.)[a-z][\w-]*\w)?|hp_\w+\(\)|hp_\w+)')
CODE_SYMBOL_RE = re.compile(
    r'^(?:Hp[A-Z]\w*\s*\**(?:(?:::?|\.)[a-z][\w-]*\w)?|hp_\w+(?:\s?\(\))?)$')


class Page(html.parser.HTMLParser):
    def __init__(self, reference, funcs):
        super().__init__(convert_charrefs=True)
        self.reference = reference      # a symbol page, not a guide
        self.funcs = funcs
        self.stack = []                  # [tag, classes, skip, last closed child]
        self.code = None                 # text of an inline <code> being read
        self.hits = []
        self.external = []
        self.scripts = set()

    def skipping(self):
        return bool(self.stack) and self.stack[-1][2]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'a' and a.get('data-namespace'):
            self.external.append(a['data-namespace'])
        if tag == 'script' and a.get('src'):
            self.scripts.add(a['src'])
        if tag in VOID:
            return
        classes = (a.get('class') or '').split()
        parent_skip = self.skipping()
        skip = parent_skip or tag in SKIP_TAGS
        if self.reference and tag in HEADINGS:
            skip = True
        if tag == 'td' and 'docblock-summary' in classes:
            skip = True
        if tag == 'dl' and 'members' in classes:
            skip = True          # the members of a class structure
        if tag == 'div' and 'docblock' in classes and self.stack and self.stack[-1][3] == 'h6':
            skip = True          # the summary under a list entry
        if tag == 'div' and 'toc' in classes:
            skip = True
        self.stack.append([tag, classes, skip, None])
        if tag == 'code' and not skip:
            self.code = []

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                if tag == 'code' and self.code is not None:
                    text = ''.join(self.code).strip()
                    self.code = None
                    if CODE_SYMBOL_RE.match(text) and self.is_symbol(text):
                        self.hits.append(('code', text))
                del self.stack[i:]
                if self.stack:
                    self.stack[-1][3] = tag
                return

    def is_symbol(self, text):
        if text.startswith('Hp'):
            return True
        # a function without a page (C-only, private) can only be code
        return re.sub(r'\s?\(\)$', '', text) in self.funcs

    def handle_data(self, data):
        if self.skipping():
            return
        if data.strip() == 'Type:' and len(self.stack) >= 2 and self.stack[-1][0] in ('em', 'td'):
            # "Type: An array of HpFoo*", the type of a property, argument or
            # return value as gi-docgen writes it: the rest of the row or
            # paragraph is no prose
            self.stack[-2][2] = True
            return
        if self.code is not None:
            self.code.append(data)
            return
        for m in NAME_RE.finditer(data):
            name = m.group(1)
            if name.startswith('hp_') and not name.endswith(')') and name not in self.funcs:
                continue
            self.hits.append(('text', name))


def check_html(html_dir, funcs, urlmap):
    problems = []
    external = {}
    unmapped = {}
    for f in sorted(os.listdir(html_dir)):
        if not f.endswith('.html'):
            continue
        # symbol pages are named kind.Name[.member].html
        reference = f.count('.') >= 2 or f in ('index.html', 'classes_hierarchy.html')
        page = Page(reference, funcs)
        page.feed(open(os.path.join(html_dir, f), encoding='utf-8').read())
        page.close()
        for kind, name in page.hits:
            problems.append((f'unlinked name ({kind})', f, name))
        for ns in page.external:
            if urlmap in page.scripts:
                external.setdefault(ns, f)
            else:
                unmapped.setdefault(ns, f)
    return problems, external, unmapped


def urlmap_namespaces(path):
    if not os.path.exists(path):
        return set()
    text = open(path, encoding='utf-8').read()
    return set(re.findall(r'\[\s*["\'](\w+)["\']\s*,\s*["\'][^"\']+["\']\s*\]', text))


# -- main ----------------------------------------------------------------------------

def main():
    if len(sys.argv) != 5:
        sys.exit('usage: check-doc-links.py SOURCE_ROOT GIR HTML_DIR URLMAP_NAME')
    root, gir, html_dir, urlmap = sys.argv[1:]
    types, funcs, symbols = load_gir(gir)
    dirs = [os.path.dirname(os.path.abspath(gir))]
    for d in os.environ.get('XDG_DATA_DIRS', '/usr/local/share:/usr/share').split(':') + ['/usr/share']:
        if d:
            dirs.append(os.path.join(d, 'gir-1.0'))
    targets = link_targets(gir, dirs)
    main_ns = ET.parse(gir).getroot().find(CORE + 'namespace').get('name')

    sections = []
    refs, links = check_sources(root, targets, main_ns)
    sections.append(('(a) gtk-doc references in the doc comments of hp-protocols/', refs))
    html_problems, external, unmapped = check_html(html_dir, funcs, urlmap)
    sections.append((f'(b) unlinked Hp names in the HTML of {os.path.basename(html_dir)}/',
                     html_problems))
    sections.append(('(c) public symbols of the GIR without Since: 1.0',
                     [('no version' if v is None else f'version {v}', os.path.basename(gir), s)
                      for s, v in symbols if not version_ok(v)]))
    known = urlmap_namespaces(os.path.join(html_dir, urlmap))
    sections.append((f'(d) links to namespaces that {urlmap} does not locate',
                     [('no URL', page, ns) for ns, page in sorted(external.items())
                      if ns not in known] +
                     [(f'page without {urlmap}', page, ns) for ns, page in sorted(unmapped.items())]))
    sections.append(('(e) gi-docgen links in the doc comments and guides that the GIRs do not resolve',
                     links))

    failed = False
    for title, problems in sections:
        by_kind = {}
        for kind, where, what in problems:
            by_kind[kind] = by_kind.get(kind, 0) + 1
        counts = ', '.join(f'{k}: {v}' for k, v in sorted(by_kind.items()))
        print(f'{title}: {len(problems)}' + (f' ({counts})' if counts else ''))
        for kind, where, what in problems[:MAX_SHOWN]:
            print(f'    {where}: {what}  [{kind}]')
        if len(problems) > MAX_SHOWN:
            print(f'    ... and {len(problems) - MAX_SHOWN} more')
        failed = failed or bool(problems)
    if failed:
        print('FAIL: write references as gi-docgen links ([class@Hp.Foo], '
              '[method@Hp.Foo.bar], [property@Hp.Foo:bar], ...) and give public '
              'symbols a Since: 1.0 tag')
        sys.exit(1)
    print('OK')


if __name__ == '__main__':
    main()
