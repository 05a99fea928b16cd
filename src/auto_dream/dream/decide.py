"""A decision someone made about the store, planned as a run: keep, merge or supersede a pair
the review queue holds, or forget a memory. The plan goes through the same apply, journal and
record as a dream's, so `undo` reverses it; nothing is distilled and no other pair is judged.
"""

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, get_args

from auto_dream.dream.actions import RetireMemory, UpdateMemory
from auto_dream.dream.consolidate import carried_body, union_sources
from auto_dream.dream.plan import Plan, make_plan, read_kept
from auto_dream.dream.snapshot import Decisions, Snapshot
from auto_dream.errors import InputError, StoreError
from auto_dream.store.memory import Memory
from auto_dream.store.review_queue import KeptPair, ReviewItem, memory_fingerprint

Resolution = Literal["keep", "merge", "supersede"]  # what a review item is resolved with
RESOLUTIONS: tuple[Resolution, ...] = get_args(Resolution)
Action = Resolution | Literal["forget"]


@dataclass(frozen=True)
class Decision:
    """What a reader decided: about review item `item` (keep, merge, supersede), or to forget a
    memory. `memory` names the side that stays (merge: --into, supersede: --winner) or the
    memory to forget, as a path, a file name or a memory name; `reason` is theirs."""

    action: Action
    item: str | None = None
    memory: str | None = None
    reason: str = ""
    by: str = "a reader"  # who decided: "a reader" (the command line), "the agent" (MCP)


def plan_decision(snapshot: Snapshot, decision: Decision) -> Plan:
    """The plan that carries out `decision`, or an error (InputError: a decision that cannot be
    made; StoreError: the store is not as the item saw it) before anything is written."""
    decisions = Decisions.start(snapshot)
    if decision.action == "forget":
        target = find_memory(snapshot, decision.memory or "")
        why = f"forgotten by {decision.by}" + (f": {decision.reason}" if decision.reason else "")
        decisions.retire(target, "archive", None, why)
        decisions.resolved.extend(item.id for item in snapshot.review_queue.items if target.path in item.memories)
        return _checked(read_kept(make_plan(snapshot, decisions)), target.path)
    item = _current_item(snapshot, decision.item or "")
    a, b = (snapshot.memories[path] for path in item.memories)
    decisions.resolved.append(item.id)
    now = snapshot.now.isoformat(timespec="seconds")
    if decision.action == "keep":
        if decision.memory:
            raise InputError("keep leaves both memories as they are: it takes no --into or --winner")
        decisions.kept.append(KeptPair(item.memories, item.fingerprints, now,
                                       decision.reason or f"kept both, decided by {decision.by}"))
        return read_kept(make_plan(snapshot, decisions))
    flag = "--into" if decision.action == "merge" else "--winner"
    if not decision.memory:
        raise InputError(f"{decision.action} needs {flag} PATH: the one of the two that stays "
                         f"({item.memories[0]} or {item.memories[1]})")
    staying = _side(item, (a, b), decision.memory, flag)
    leaving = b if staying is a else a
    said = f" ({decision.reason})" if decision.reason else ""
    if decision.action == "merge":
        after = replace(staying, body=carried_body(leaving, staying),
                        sources=union_sources(staying.sources, leaving.sources))
        if after != staying:
            decisions.actions.append(UpdateMemory(staying, after, (), (leaving.path,),
                                                  f"carried in the text of {leaving.path}, decided by {decision.by}"))
            decisions.live[staying.path] = after
            decisions.profiles.rewritten(after)
        decisions.retire(leaving, "merge", staying.path,
                         f"merged into {staying.path}, decided by {decision.by}{said}: {item.reason}")
    else:
        decisions.retire(leaving, "supersede", staying.path,
                         f"superseded by {staying.path}, decided by {decision.by}{said}: {item.reason}")
    return _checked(read_kept(make_plan(snapshot, decisions)), leaving.path)


def find_memory(snapshot: Snapshot, wanted: str) -> Memory:
    """The live memory `wanted` names: its path (as `list --json` gives it), its file name, or
    its name when exactly one memory has it."""
    wanted = wanted.strip()
    if not wanted:
        raise InputError("name the memory: its path (as `auto-dream list --json` gives it), file name or name")
    memories = snapshot.memories
    if wanted in memories:
        return memories[wanted]
    paths = snapshot.context.paths
    if wanted.endswith(".md") and (relative := _relative(snapshot, wanted)) and relative in memories:
        return memories[relative]
    by_file = [path for path in memories if path.rsplit("/", 1)[-1] in (wanted, f"{wanted}.md")]
    if len(by_file) == 1:
        return memories[by_file[0]]
    by_name = [path for path in memories if memories[path].name.strip() == wanted]
    if len(by_name) == 1:
        return memories[by_name[0]]
    if len(by_file) + len(by_name) > 1:
        raise InputError(f"{wanted!r} names more than one memory: give its path (`auto-dream list --json`)")
    raise InputError(f"no memory {wanted!r} in {paths.root} (`auto-dream list` shows them)")


def _relative(snapshot: Snapshot, wanted: str) -> str | None:
    try:
        return Path(wanted).resolve().relative_to(snapshot.context.paths.root.resolve()).as_posix()
    except (ValueError, OSError):
        return None


def _current_item(snapshot: Snapshot, wanted: str) -> ReviewItem:
    """The pending item `wanted`, both of its memories still as the item saw them."""
    item = snapshot.review_queue.item(wanted.strip())
    if item is None:
        raise InputError(f"no review item {wanted!r} waits (`auto-dream review` lists them)")
    for path, seen in zip(item.memories, item.fingerprints):
        memory = snapshot.memories.get(path)
        if memory is None:
            raise StoreError(f"review item {item.id}: {path} is gone; the next dream drops the item")
        if memory_fingerprint(memory) != seen:
            raise StoreError(f"review item {item.id}: {path} changed since it was listed; "
                             "the next dream judges the pair again")
    return item


def _side(item: ReviewItem, sides: tuple[Memory, Memory], wanted: str, flag: str) -> Memory:
    wanted = wanted.strip()
    for memory in sides:
        if wanted in (memory.path, memory.file_name, memory.file_name.removesuffix(".md"), memory.name.strip()):
            return memory
    raise InputError(f"{flag} {wanted!r} is neither memory of item {item.id}: "
                     f"{item.memories[0]} or {item.memories[1]}")


def _checked(plan: Plan, retired: str) -> Plan:
    """The plan, if it retires `retired` as decided; a StoreError naming why not (a read-only
    file) otherwise: a decision is carried out whole or not at all."""
    if any(isinstance(a, RetireMemory) and a.memory.path == retired and not a.proposed for a in plan.actions):
        return plan
    why = next((w for w in plan.warnings if retired in w), f"{retired} cannot be retired")
    raise StoreError(f"{why}; nothing was changed")
