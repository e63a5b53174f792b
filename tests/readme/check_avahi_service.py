#!/usr/bin/env python3
"""check_avahi_service.py FILE DOC: the Avahi service file is well-formed XML announcing
_mcp._tcp with the TXT records docs/discovery.md's table names (path=/mcp first), and nothing
the table does not name."""
import re
import sys
import xml.etree.ElementTree as ET

path, doc = sys.argv[1], sys.argv[2]
problems = []
root = ET.parse(path).getroot()
if root.tag != "service-group":
    problems.append(f"the root is <{root.tag}>, not <service-group>")
services = root.findall("service")
if len(services) != 1:
    problems.append(f"{len(services)} <service> elements, not 1")
else:
    s = services[0]
    if (s.findtext("type") or "").strip() != "_mcp._tcp":
        problems.append(f"type {s.findtext('type')!r}, not _mcp._tcp")
    port = (s.findtext("port") or "").strip()
    if not port.isdigit() or not 0 < int(port) < 65536:
        problems.append(f"port {port!r}")
    txt = [t.text.strip() for t in s.findall("txt-record")]
    keys = [t.split("=", 1)[0] for t in txt]
    documented = set(re.findall(r"^\| `([a-z]+)` \|", open(doc, encoding="utf-8").read(), re.M))
    if not txt or txt[0] != "path=/mcp":
        problems.append(f"the first TXT record is {txt[:1]}, not path=/mcp")
    for k in keys:
        if k not in documented:
            problems.append(f"TXT key {k!r} is not in {doc}'s table")
    for k in documented - set(keys):
        problems.append(f"{doc}'s key {k!r} is not announced")
for p in problems:
    print(f"{path}: {p}")
sys.exit(1 if problems else 0)
