"""Templates (DESIGN section 5): a store's own templates/ folder overrides the packaged ones."""

from importlib.resources import files
from pathlib import Path

from auto_dream.errors import StoreError


def load_template(name: str, store_templates: Path | None = None) -> str:
    """The text of template `name`, from the store's templates/ when it has one."""
    if store_templates is not None:
        override = store_templates / name
        if override.is_file():
            try:
                return override.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise StoreError(f"cannot read the template {override}: {error}") from None
    return files("auto_dream").joinpath("templates", name).read_text(encoding="utf-8")
