"""Templates (docs/store.md and docs/dream.md): a store's own templates/ folder overrides the packaged ones."""

import os
from importlib.resources import files
from pathlib import Path

from auto_dream.errors import StoreError
from auto_dream.store.files import NotRegular, TooLarge, read_file

MAX_TEMPLATE_BYTES = 1_000_000  # a prompt or a header; anything larger is not one


def load_template(name: str, store_templates: Path | None = None) -> str:
    """The text of template `name`, from the store's templates/ when it has one.

    A store's template is read only when it is a regular file inside the store: one that
    links out of it (to a secret, to /dev/zero) would be copied into MEMORY.md or sent to
    the API with a prompt, and is refused."""
    if store_templates is not None:
        override = store_templates / name
        text = _read_override(override, store_templates.parent)
        if text is not None:
            return text
    return files("auto_dream").joinpath("templates", name).read_text(encoding="utf-8")


def _read_override(override: Path, store_root: Path) -> str | None:
    """The override's text, or None when there is none (or it is not a file: a FIFO, a folder)."""
    if not os.path.lexists(override):
        return None
    real = os.path.realpath(override)
    if not Path(real).is_relative_to(os.path.realpath(store_root)):
        raise StoreError(f"the template {override} is a symlink to outside the store ({real}): refused")
    try:
        data, _ = read_file(Path(real), MAX_TEMPLATE_BYTES, follow=True)
    except (FileNotFoundError, NotRegular):
        return None
    except TooLarge as large:
        raise StoreError(f"the template {override} is {large.size:,} bytes: "
                         f"more than a template holds ({MAX_TEMPLATE_BYTES:,})") from None
    except OSError as error:
        raise StoreError(f"cannot read the template {override}: {error.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise StoreError(f"cannot read the template {override}: {error}") from None
