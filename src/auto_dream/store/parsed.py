"""A memory file as a dream sees it: the memory, its word profile and what it cites, with the
fingerprint of the file it was read from. The parse cache stores these (store/cache.py); a
long-lived caller keeps the ones it read (context.ReadMemo)."""

from dataclasses import dataclass

from auto_dream.judge.similarity import Profile
from auto_dream.judge.staleness import References, extract_references
from auto_dream.store.files import Fingerprint
from auto_dream.store.memory import Memory


@dataclass(frozen=True)
class Parsed:
    """A memory file as a dream sees it. `profile` is None when the cache holds it (ParseCache.profile)."""

    fingerprint: Fingerprint
    memory: Memory
    profile: Profile | None
    refs: References

    @classmethod
    def of(cls, fingerprint: Fingerprint, memory: Memory) -> "Parsed":
        text = memory.text()
        return cls(fingerprint, memory, Profile.of(text, memory), extract_references(text))
