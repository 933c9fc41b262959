#!/usr/bin/env python3
# hp-mkfields.py: the typed accessors of a configuration class, made
# from its field table
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
#   hp-mkfields.py SOURCE.c OUT-fields.h OUT-fields.c
#
# In the spirit of glib-mkenums: SOURCE.c declares its fields once, in a
# table of HP_CONFIG_FIELD_* entries (hp-config-field.h). For every field
# this writes a getter and a setter, each with its doc comment, unless
# SOURCE.c defines a function of that name itself (a getter that gives a
# derived value, for instance):
#
# - OUT-fields.h: the declarations and their doc comments; the class's
#   public header includes it, and it is installed and scanned with it;
# - OUT-fields.c: the definitions, by the HP_CONFIG_DEFINE_* macros;
#   SOURCE.c includes it at its end, where the instance struct is known.
#
# The C type of a field is that of its member in the instance struct (or
# the private struct, for a table of a derivable class); the function
# prefix is that of the class's G_DEFINE_*TYPE*.

import os
import re
import sys

ENTRY = re.compile(r"\bHP_CONFIG_FIELD_([A-Z0-9]+)\s*\(")
DEFINE_TYPE = re.compile(r"\bG_DEFINE_[A-Z_]*TYPE[A-Z_]*\s*\(\s*(\w+)\s*,\s*(\w+)")
STRUCT = re.compile(r"struct\s+_(\w+)\s*\{(.*?)\};|typedef\s+struct\s*\{(.*?)\}\s*(\w+)\s*;", re.S)
MEMBER = re.compile(r"^\s*([A-Za-z_][\w\s]*?[\w*]+?)\s*(\**)\s*(\w+)\s*;", re.M)
COMMENT = re.compile(r"/\*.*?\*/", re.S)


def fail(message):
    raise SystemExit("hp-mkfields.py: %s" % message)


def arguments(text, start):
    """The top-level arguments of the call whose '(' is at start"""
    args, depth, current, i, quoted = [], 0, "", start, False
    while i < len(text):
        char = text[i]
        if quoted:
            current += char
            if char == "\\":
                current += text[i + 1]
                i += 1
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
            current += char
        elif char == "(":
            depth += 1
            if depth > 1:
                current += char
        elif char == ")":
            depth -= 1
            if depth == 0:
                args.append(current.strip())
                return args
            current += char
        elif char == "," and depth == 1:
            args.append(current.strip())
            current = ""
        else:
            current += char
        i += 1
    fail("unterminated HP_CONFIG_FIELD_* entry")


def members(code):
    """{struct type: {member: C type}}"""
    found = {}
    for match in STRUCT.finditer(code):
        name, body = (match.group(1), match.group(2)) if match.group(1) else \
            (match.group(4), match.group(3))
        found[name] = {m.group(3): (m.group(1).strip() + " " + m.group(2)).strip()
                       for m in MEMBER.finditer(body)}
    return found


def c_type(ctype):
    return ctype if ctype.endswith("*") else ctype + " "


def fields(code):
    """[(class, prefix, private, member, field name, C type)] in table order"""
    prefixes = dict(DEFINE_TYPE.findall(code))
    structs = members(code)
    out = []
    for match in ENTRY.finditer(code):
        struct, member, name = arguments(code, match.end() - 1)[:3]
        private = struct.endswith("Private")
        owner = struct[:-len("Private")] if private else struct
        if owner not in prefixes:
            fail("%s: no G_DEFINE_*TYPE* of %s" % (name, owner))
        ctype = structs.get(struct, {}).get(member)
        if ctype is None:
            fail("%s: %s has no member %s" % (name, struct, member))
        out.append((owner, prefixes[owner], private, member, name.strip('"'), ctype))
    return out


def defined(code, function):
    return re.search(r"^%s\s*\(" % re.escape(function), code, re.M) is not None


def fallback(ctype):
    if ctype.endswith("*"):
        return "NULL"
    builtin = {"gboolean": "FALSE", "gdouble": "0.0", "gfloat": "0.0f", "gint": "0", "guint": "0",
               "gint64": "0", "guint64": "0", "glong": "0", "gulong": "0"}
    return builtin.get(ctype, "(%s) 0" % ctype)


def getter_doc(owner, prefix, member, name, ctype):
    returns = "(transfer none) (nullable): the value" if ctype.endswith("*") else "the value"
    return ("/**\n * %s_get_%s: (get-property %s)\n * @self: a [class@Hp.%s]\n *\n"
            " * Gets [property@Hp.%s:%s].\n *\n * Returns: %s\n *\n * Since: 1.0\n */\n"
            % (prefix, member, name, owner[2:], owner[2:], name, returns))


def setter_doc(owner, prefix, member, name, ctype):
    value = "(nullable): the new value, kept (not copied)" if ctype.endswith("*") \
        else "the new value"
    return ("/**\n * %s_set_%s: (set-property %s)\n * @self: a [class@Hp.%s]\n * @%s: %s\n *\n"
            " * Sets [property@Hp.%s:%s], as [method@GObject.Object.set]\n"
            " * does: a value out of the field's range is a programming error,\n"
            " * which [method@Hp.Config.set_value] reports as an error instead.\n *\n"
            " * Since: 1.0\n */\n"
            % (prefix, member, name, owner[2:], member, value, owner[2:], name))


def generate(source, code):
    header, body = [], []
    for owner, prefix, private, member, name, ctype in fields(code):
        getter, setter = "%s_get_%s" % (prefix, member), "%s_set_%s" % (prefix, member)
        if not defined(code, getter):
            header.append(getter_doc(owner, prefix, member, name, ctype) +
                          "HP_AVAILABLE_IN_ALL\n%s%s (%s *self);\n" % (c_type(ctype), getter,
                                                                       owner))
            body.append("HP_CONFIG_DEFINE_%sGETTER (%s, %s, %s, %s, %s)\n" % (
                "PRIVATE_" if private else "", prefix, owner, ctype, member, fallback(ctype)))
        if not defined(code, setter):
            header.append(setter_doc(owner, prefix, member, name, ctype) +
                          "HP_AVAILABLE_IN_ALL\nvoid %s (%s *self,\n%s%s%s);\n" % (
                              setter, owner, " " * (len(setter) + 7), c_type(ctype), member))
            body.append('HP_CONFIG_DEFINE_SETTER (%s, %s, %s, %s, "%s")\n' % (
                prefix, owner, ctype, member, name))
    if not header:
        fail("%s has no field table" % source)
    banner = "/* %%s: the field accessors of %s, made by hp-mkfields.py\n * from its field " \
        "table; do not edit */\n\n" % source
    guard = ("#pragma once\n\n#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)\n"
             "# error \"Only <hp-protocols/hp-protocols.h> can be included directly.\"\n#endif\n\n")
    return (banner % os.path.basename(sys.argv[2]) + guard + "G_BEGIN_DECLS\n\n" +
            "\n".join(header) + "\nG_END_DECLS\n",
            banner % os.path.basename(sys.argv[3]) + "\n".join(body))


def main():
    if len(sys.argv) != 4:
        fail("usage: hp-mkfields.py SOURCE.c OUT-fields.h OUT-fields.c")
    with open(sys.argv[1], encoding="utf-8") as f:
        code = COMMENT.sub("", f.read())
    header, body = generate(os.path.basename(sys.argv[1]), code)
    for path, text in ((sys.argv[2], header), (sys.argv[3], body)):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
