#!/usr/bin/env python3
"""A small MaxMind DB writer for the compile benchmark's big databases
(scripts/bench/steer_compile.sh), after the MaxMind DB File Format Specification
(version 2.0): a binary search tree of 24-bit records, a 16-byte separator, the data section,
then "\\xAB\\xCD\\xEFMaxMind.com" and the metadata map. IPv6 trees only (ip_version 6), with
IPv4 networks at ::a.b.c.d/96+len, where libmaxminddb looks IPv4 addresses up. Reserved and
documentation ranges are kept. The tests build their MMDBs with MaxMind's own writer
(tests/steer/mmdb_build.pl); this one stays for sizes that writer cannot build in minutes
(it took 192 s for 100000 networks on the 2-CPU VM). This one took 731 s and 3.5 GB for 1M.

Usage: mmdb_writer.py OUT.mmdb NETWORKS.json
NETWORKS.json: [{"network": "198.51.100.0/24", "data": {...}}, ...]; data maps, strings,
doubles ("location": {"latitude": 41.8}) and unsigned integers are supported.
"""
import ipaddress
import json
import struct
import sys
import time


def ctrl(type_, size):
    """Control byte(s) for a type and size (spec: "Data Section Separator"... "Control Byte")."""
    out = bytearray()
    if size < 29:
        first, extra = size, b""
    elif size < 29 + 256:
        first, extra = 29, bytes([size - 29])
    elif size < 285 + 65536:
        first, extra = 30, struct.pack(">H", size - 285)
    else:
        first, extra = 31, struct.pack(">I", size - 65821)[1:]
    if type_ <= 7:
        out.append(type_ << 5 | first)
    else:
        out.append(first)
        out.append(type_ - 7)
    return bytes(out) + extra


class U32(int):
    """An integer the format types as uint32 (metadata's node_count)."""


class U64(int):
    """An integer the format types as uint64 (metadata's build_epoch)."""


def encode(v):
    if isinstance(v, (U32, U64)):
        b = int(v).to_bytes((int(v).bit_length() + 7) // 8, "big")
        return ctrl(6 if isinstance(v, U32) else 9, len(b)) + b
    if isinstance(v, bool):
        return ctrl(14, 1 if v else 0)
    if isinstance(v, str):
        b = v.encode()
        return ctrl(2, len(b)) + b
    if isinstance(v, float):
        return ctrl(3, 8) + struct.pack(">d", v)
    if isinstance(v, int):
        if v < 0:
            raise ValueError("negative integers are not supported")
        b = v.to_bytes((v.bit_length() + 7) // 8, "big")
        if v < 1 << 16:
            return ctrl(5, len(b)) + b
        if v < 1 << 32:
            return ctrl(6, len(b)) + b
        return ctrl(9, len(b)) + b
    if isinstance(v, dict):
        out = ctrl(7, len(v))
        for k, x in v.items():
            out += encode(str(k)) + encode(x)
        return out
    if isinstance(v, list):
        out = ctrl(11, len(v))
        for x in v:
            out += encode(x)
        return out
    raise TypeError(type(v))


class Node:
    __slots__ = ("kids", "data")

    def __init__(self):
        self.kids = [None, None]
        self.data = None


def build(entries):
    root = Node()
    for net, data in entries:
        n = ipaddress.ip_network(net)
        if n.version == 4:
            bits, plen = int(n.network_address), n.prefixlen + 96
        else:
            bits, plen = int(n.network_address), n.prefixlen
        node = root
        for i in range(plen):
            b = (bits >> (127 - i)) & 1
            if node.kids[b] is None:
                node.kids[b] = Node()
            node = node.kids[b]
        node.data = data
    if root.data is not None:
        raise ValueError("::/0 cannot hold data in this writer")
    # Tree nodes are the nodes with children; a childless node is a record (data or empty).
    # Data at a node with children is inherited by its missing sides.
    order, queue = [], [(root, None)]
    while queue:
        node, inh = queue.pop(0)
        order.append((node, inh))
        here = node.data if node.data is not None else inh
        for k in node.kids:
            if k is not None and (k.kids[0] is not None or k.kids[1] is not None):
                queue.append((k, here))
    index = {id(n): i for i, (n, _) in enumerate(order)}
    count = len(order)
    blobs, offsets, data = [], {}, bytearray()

    def data_ref(d):
        key = json.dumps(d, sort_keys=True)
        if key not in offsets:
            offsets[key] = len(data)
            data.extend(encode(d))
        return count + 16 + offsets[key]

    tree = bytearray()
    for node, inh in order:
        here = node.data if node.data is not None else inh
        recs = []
        for k in node.kids:
            if k is None:
                recs.append(data_ref(here) if here is not None else count)
            elif k.kids[0] is None and k.kids[1] is None:
                d = k.data if k.data is not None else here
                recs.append(data_ref(d) if d is not None else count)
            else:
                recs.append(index[id(k)])
        for r in recs:
            if r >= 1 << 24:
                raise ValueError("database too large for 24-bit records")
            tree += r.to_bytes(3, "big")
    meta = {
        "binary_format_major_version": 2,
        "binary_format_minor_version": 0,
        "build_epoch": U64(int(time.time())),
        "database_type": "pop53-test",
        "description": {"en": "pop53 test database"},
        "ip_version": 6,
        "languages": ["en"],
        "node_count": U32(count),
        "record_size": 24,
    }
    return bytes(tree) + bytes(16) + bytes(data) + b"\xab\xcd\xefMaxMind.com" + encode(meta)


def main():
    with open(sys.argv[2]) as f:
        entries = [(e["network"], e["data"]) for e in json.load(f)]
    with open(sys.argv[1], "wb") as f:
        f.write(build(entries))


if __name__ == "__main__":
    main()
