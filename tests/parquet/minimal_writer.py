"""A minimal parquet writer for tests: one row group, PLAIN values, uncompressed v1 data pages, RLE levels; columns
of strings, int32, int64, list<string> and HF's image struct {bytes, path}. Shared by tests/train/hf_recipe_test.py
and tests/python (parquet image rows); the C++ reader's own fixtures come from real writers (scripts/fixtures).

write_parquet(path, [(name, kind)], rows): kind is STRING, INT32, INT64, IMAGE or LIST; a row is a dict of
name -> value (an IMAGE value is {"bytes": b"...", "path": "..."}; None for a null).
"""
import struct


class Thrift:  # the compact protocol, only what FileMetaData and PageHeader need
    I32, I64, BIN, LIST, STRUCT = 5, 6, 8, 9, 12

    def __init__(self):
        self.b = bytearray()

    def varint(self, v):
        while v >= 0x80:
            self.b.append((v & 0x7F) | 0x80)
            v >>= 7
        self.b.append(v)

    def zigzag(self, v):
        self.varint((v << 1) ^ (v >> 63))

    def struct(self, fields):  # [(field id, kind, value)], ids ascending
        last = 0
        for fid, kind, v in fields:
            if v is None:
                continue
            t = {"i32": self.I32, "i64": self.I64, "bin": self.BIN, "struct": self.STRUCT}.get(kind, self.LIST)
            self.b.append(((fid - last) << 4) | t)
            last = fid
            self.value(kind, v)
        self.b.append(0)

    def value(self, kind, v):
        if kind in ("i32", "i64"):
            self.zigzag(v)
        elif kind == "bin":
            v = v.encode() if isinstance(v, str) else v
            self.varint(len(v))
            self.b += v
        elif kind == "struct":
            self.struct(v)
        else:  # list_<kind>
            inner = kind[5:]
            et = {"i32": self.I32, "bin": self.BIN, "struct": self.STRUCT}[inner]
            self.b.append((len(v) << 4) | et if len(v) < 15 else 0xF0 | et)
            if len(v) >= 15:
                self.varint(len(v))
            for x in v:
                self.value(inner, x)


def thrift(fields):
    t = Thrift()
    t.struct(fields)
    return bytes(t.b)


def rle_levels(levels, max_level):  # RLE runs of the hybrid encoding, 4-byte length prefix (data page v1)
    width = (max_level.bit_length() + 7) // 8
    out, i = bytearray(), 0
    while i < len(levels):
        j = i
        while j < len(levels) and levels[j] == levels[i]:
            j += 1
        t = Thrift()
        t.varint((j - i) << 1)
        out += t.b + levels[i].to_bytes(width, "little")
        i = j
    return struct.pack("<I", len(out)) + out


STRING, INT32, INT64, IMAGE, LIST = "string", "int32", "int64", "image", "list"


def leaves(name, kind):  # (path, physical type, max def, max rep, value of a row -> [(rep, def, value)])
    def flat(v, d):
        return [(0, d, v)] if v is not None else [(0, d - 1, None)]
    if kind == IMAGE:
        return [([name, "bytes"], 6, 2, 0, lambda r: flat(r[name]["bytes"], 2)),
                ([name, "path"], 6, 2, 0, lambda r: flat(r[name]["path"], 2))]
    if kind == LIST:
        def items(r):
            v = r[name]
            if v is None:
                return [(0, 0, None)]
            if not v:
                return [(0, 1, None)]
            return [(0 if k == 0 else 1, 3, x) for k, x in enumerate(v)]
        return [([name, "list", "element"], 6, 3, 1, items)]
    ptype = {STRING: 6, INT32: 1, INT64: 2}[kind]
    return [([name], ptype, 1, 0, lambda r: flat(r[name], 1))]


def schema_elements(columns):
    utf8 = 0
    out = [[(4, "bin", "schema"), (5, "i32", len(columns))]]
    for name, kind in columns:
        if kind == IMAGE:
            out += [[(3, "i32", 1), (4, "bin", name), (5, "i32", 2)],
                    [(1, "i32", 6), (3, "i32", 1), (4, "bin", "bytes")],
                    [(1, "i32", 6), (3, "i32", 1), (4, "bin", "path"), (6, "i32", utf8)]]
        elif kind == LIST:
            out += [[(3, "i32", 1), (4, "bin", name), (5, "i32", 1), (6, "i32", 3)],
                    [(3, "i32", 2), (4, "bin", "list"), (5, "i32", 1)],
                    [(1, "i32", 6), (3, "i32", 1), (4, "bin", "element"), (6, "i32", utf8)]]
        else:
            ptype = {STRING: 6, INT32: 1, INT64: 2}[kind]
            out.append([(1, "i32", ptype), (3, "i32", 1), (4, "bin", name)] +
                       ([(6, "i32", utf8)] if kind == STRING else []))
    return out


def plain(ptype, v):
    if ptype == 6:
        v = v.encode() if isinstance(v, str) else v
        return struct.pack("<I", len(v)) + v
    return struct.pack("<i" if ptype == 1 else "<q", v)


def write_parquet(path, columns, rows):
    body, chunks, pos = bytearray(b"PAR1"), [], 4
    for name, kind in columns:
        for p, ptype, max_def, max_rep, cells in leaves(name, kind):
            triples = [t for r in rows for t in cells(r)]
            data = bytearray()
            if max_rep:
                data += rle_levels([t[0] for t in triples], max_rep)
            data += rle_levels([t[1] for t in triples], max_def)
            for _, d, v in triples:
                if d == max_def:
                    data += plain(ptype, v)
            header = thrift([(1, "i32", 0), (2, "i32", len(data)), (3, "i32", len(data)),
                             (5, "struct", [(1, "i32", len(triples)), (2, "i32", 0), (3, "i32", 3), (4, "i32", 3)])])
            page = header + bytes(data)
            meta = [(1, "i32", ptype), (2, "list_i32", [0, 3]), (3, "list_bin", p), (4, "i32", 0),
                    (5, "i64", len(triples)), (6, "i64", len(page)), (7, "i64", len(page)), (9, "i64", pos)]
            chunks.append([(2, "i64", pos), (3, "struct", meta)])
            body += page
            pos += len(page)
    footer = thrift([(1, "i32", 1), (2, "list_struct", schema_elements(columns)), (3, "i64", len(rows)),
                     (4, "list_struct", [[(1, "list_struct", chunks), (2, "i64", pos - 4), (3, "i64", len(rows))]]),
                     (6, "bin", "bridgetune tests minimal_writer.py")])
    with open(path, "wb") as f:
        f.write(bytes(body) + footer + struct.pack("<I", len(footer)) + b"PAR1")
