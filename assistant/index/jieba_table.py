"""jieba's prefix dictionary as a memory-mapped hash table, written once per machine.

jieba keeps its dictionary as a dict of about 498k words and prefixes (count 0 for a prefix); its own
cache is that dict marshalled, and loading it builds every key again: 0.6 s of CPU on each cold start
that reads Chinese, while a question looks up a few hundred of them. The table here holds the same
words and counts (written from the dict jieba builds, so segmentation is the same), opened with mmap
and searched by a stable hash (crc32, open addressing): opening costs a few syscalls, a lookup a few
microseconds. Words added later (the glossary's Chinese terms, via Tokenizer.add_word) live in a small
dict in front of it.

File: header (magic, word count, slot count, total, blob length), slots (uint32, word index + 1, 0 is
empty), offsets (uint32, n + 1), counts (uint32), the UTF-8 words back to back.
"""
from __future__ import annotations

import mmap
import os
import struct
import zlib
from pathlib import Path

_MAGIC = b"MWJIEBA1"
_UNSET = object()
SEEN_MAX = 200_000  # words looked up and remembered (a dict lookup after the first); past it, start over
_HEADER = struct.Struct("<8sIIQQ")


def table_path(cache_dir: Path, dict_file: Path, version: str) -> Path:
    """Named by jieba's version and its dictionary file's size and mtime: another dictionary, another table."""
    st = dict_file.stat()
    return Path(cache_dir) / f"jieba-freq-{version}-{st.st_size}-{st.st_mtime_ns}.table"


def write_table(path: Path, freq: dict, total: int) -> None:
    """Write atomically (a temporary file renamed), so a reader never sees half a table."""
    words = list(freq)
    encoded = [w.encode("utf-8") for w in words]
    n = len(words)
    nslots = 1 << max(4, (2 * n - 1).bit_length())  # load factor at most 1/2
    mask = nslots - 1
    slots = [0] * nslots
    for i, b in enumerate(encoded):
        s = zlib.crc32(b) & mask
        while slots[s]:
            s = (s + 1) & mask
        slots[s] = i + 1
    offsets = [0] * (n + 1)
    for i, b in enumerate(encoded):
        offsets[i + 1] = offsets[i] + len(b)
    blob = b"".join(encoded)
    counts = [int(freq[w]) for w in words]
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(_HEADER.pack(_MAGIC, n, nslots, int(total), len(blob)))
        f.write(struct.pack(f"<{nslots}I", *slots))
        f.write(struct.pack(f"<{n + 1}I", *offsets))
        f.write(struct.pack(f"<{n}I", *counts))
        f.write(blob)
    os.replace(tmp, path)


class FreqTable:
    """The part of a dict jieba's Tokenizer uses as FREQ: `in`, `[]`, `get`, and `[]=` (add_word)."""

    def __init__(self, path: Path):
        with open(path, "rb") as f:
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        magic, n, nslots, total, blob_len = _HEADER.unpack_from(self._map, 0)
        if magic != _MAGIC or _HEADER.size + 4 * (nslots + 2 * n + 1) + blob_len != len(self._map):
            raise ValueError(f"{path} is not a complete jieba table")
        view = memoryview(self._map)
        at = _HEADER.size
        self._slots = view[at:at + 4 * nslots].cast("I")
        at += 4 * nslots
        self._offsets = view[at:at + 4 * (n + 1)].cast("I")
        at += 4 * (n + 1)
        self._counts = view[at:at + 4 * n].cast("I")
        at += 4 * n
        self._blob = self._map[at:at + blob_len]  # one bytes object: slicing it is cheaper than the mmap
        self._mask = nslots - 1
        self.total = total
        self._added: dict[str, int] = {}
        # every word looked up, with its count or None: the warm path reads the same few thousand
        # words again and again (a dict lookup, 3x cheaper than the table's)
        self._seen: dict[str, int | None] = {}

    def _index(self, word: str) -> int:
        b = word.encode("utf-8")
        s = zlib.crc32(b) & self._mask
        slots, offsets, blob = self._slots, self._offsets, self._blob
        while True:
            i = slots[s]
            if not i:
                return -1
            i -= 1
            if blob[offsets[i]:offsets[i + 1]] == b:
                return i
            s = (s + 1) & self._mask

    def get(self, word: str, default=None):
        v = self._seen.get(word, _UNSET)
        if v is _UNSET:
            v = self._added.get(word)
            if v is None:
                i = self._index(word)
                v = None if i < 0 else self._counts[i]
            if len(self._seen) >= SEEN_MAX:
                self._seen.clear()
            self._seen[word] = v
        return default if v is None else v

    def __contains__(self, word: str) -> bool:
        return self.get(word) is not None

    def __getitem__(self, word: str) -> int:
        v = self.get(word)
        if v is None:
            raise KeyError(word)
        return v

    def __setitem__(self, word: str, count: int) -> None:
        self._added[word] = count
        self._seen.pop(word, None)

    def __len__(self) -> int:
        return len(self._counts) + sum(1 for w in self._added if self._index(w) < 0)
