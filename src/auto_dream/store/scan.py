"""Finding the memory files of a store and reading them all."""

from dataclasses import dataclass, field
from datetime import tzinfo

from auto_dream.store.cache import ParseCache
from auto_dream.store.context import ReadMemo
from auto_dream.store.memory import Memory, Unreadable, read_memory
from auto_dream.store.parsed import Parsed
from auto_dream.store.paths import StoreLayout
from auto_dream.store.walk import Fingerprint as Fingerprint  # re-exported, with fingerprint
from auto_dream.store.walk import fingerprint as fingerprint
from auto_dream.store.walk import walk_memory_files


@dataclass(frozen=True)
class MemoryScan:
    memories: list[Memory]
    unreadable: list[Unreadable]
    fingerprints: dict[str, Fingerprint] = field(default_factory=dict)  # by memory path, taken before reading
    parsed: dict[str, Parsed] = field(default_factory=dict)  # with profiles and references (dream's view)
    unchanged: set[str] = field(default_factory=set)  # paths the cache had as they are: untouched since


@dataclass(frozen=True)
class StoreScan:
    """What a dream knows of memories/ before it reads any memory the parse cache holds."""

    paths: list[str]  # every memory file, in no particular order (sorting 100,000 costs a tenth of a second)
    read: dict[str, Memory]  # the memories read from their files this time, by path
    unchanged: set[str]  # the others: the cache holds them as they are on disk
    unreadable: list[Unreadable]
    fingerprints: dict[str, Fingerprint]  # by memory path, taken before reading
    parsed: dict[str, Parsed] = field(default_factory=dict)  # of the memories read, with a cache
    locked: frozenset[str] = frozenset()  # memory files their owner may not write (chmod 0444), as listed


def scan_store(paths: StoreLayout, tz: tzinfo | None, *, archived: bool = False,
               cache: ParseCache | None = None, memo: ReadMemo | None = None) -> StoreScan:
    """Every memory file under memories/ (or archive/): the files the cache holds as they are
    are only named; the rest are read (and, with a cache, parsed for it: the caller decides
    whether to save it). Files that are not memories are reported. `memo`: the files read
    before in this process, by path; one whose fingerprint (size, mtime, inode) is as it was is
    taken from it, not read again, and the memo is kept to what is on disk."""
    folder_name = paths.memory_folder(archived=archived)
    locked: list[str] = []
    files, odd = walk_memory_files(paths.root / folder_name, folder_name, ordered=False,
                                   ext=paths.archive_ext if archived else ".md", locked=locked)
    fingerprints = dict(files)
    rows = cache.rows if cache is not None else {}
    # a comprehension and set operations, not a loop of calls: this runs for every file of the store
    unchanged = {path for path, (size, mtime_ns, _) in files
                 if (row := rows.get(path)) is not None and row[2] == size and row[3] == mtime_ns}
    read: dict[str, Memory] = {}
    parsed_by_path: dict[str, Parsed] = {}
    unreadable: list[Unreadable] = []
    if memo is not None and memo.read_as != (tz, paths.untyped):  # read another way: read again
        memo.files, memo.read_as = {}, (tz, paths.untyped)
    for relative in sorted(fingerprints.keys() - unchanged):
        known = memo.files.get(relative) if memo is not None else None
        if known is not None and known.fingerprint == fingerprints[relative]:
            read[relative] = known.memory
            if cache is not None:
                parsed_by_path[relative] = known
                cache.put(known)
            continue
        parsed = read_memory(paths.root / relative, paths.root, tz, paths.untyped)
        if isinstance(parsed, Memory):
            read[relative] = parsed
            if cache is not None or memo is not None:
                made = Parsed.of(fingerprints[relative], parsed)
                if memo is not None:
                    memo.files[relative] = made
                if cache is not None:
                    parsed_by_path[relative] = made
                    cache.put(made)
        else:
            unreadable.append(parsed)
            del fingerprints[relative]  # parsed.path is as shown, control characters written out
    if memo is not None:  # a file gone, or unreadable now, is not kept
        prefix = folder_name + "/"
        for gone in [path for path in memo.files if path.startswith(prefix) and path not in fingerprints]:
            del memo.files[gone]
    unreadable.extend(odd)
    return StoreScan(paths=list(fingerprints), read=read, unchanged=unchanged, unreadable=unreadable,
                     fingerprints=fingerprints, parsed=parsed_by_path,
                     locked=frozenset(path for path in locked if path in fingerprints))


def scan_memories(paths: StoreLayout, tz: tzinfo | None, *, archived: bool = False,
                  cache: ParseCache | None = None, memo: ReadMemo | None = None) -> MemoryScan:
    """Every memory under memories/ (or archive/), parsed; the files that are not memories, reported.

    With a cache, a file whose size and mtime the cache holds is not read again, and files
    that were read are added to it (the caller decides whether to save it).
    """
    scan = scan_store(paths, tz, archived=archived, cache=cache, memo=memo)
    parsed = dict(scan.parsed)
    if scan.unchanged and cache is not None:  # only a cache finds a file unchanged
        hits = cache.parsed(None if len(scan.unchanged) > len(cache.rows) // 2 else list(scan.unchanged))
        parsed.update((path, hits[path]) for path in scan.unchanged)
    memories = [scan.read[p] if p in scan.read else parsed[p].memory for p in sorted(scan.paths)]
    return MemoryScan(memories=memories, unreadable=scan.unreadable, fingerprints=scan.fingerprints,
                      parsed=parsed, unchanged=scan.unchanged)
