"""README stays true: the Quick start holds the two commands CI runs, and every config key is documented."""

from pathlib import Path

from pydantic import BaseModel

from claims_pipeline.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def config_keys(model: type[BaseModel] = Settings, prefix: str = "") -> list[str]:
    keys = []
    for name, field in model.model_fields.items():
        if field.exclude:
            continue
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel) and name not in ("default_host", "gov_host"):
            keys += config_keys(ann, f"{prefix}{name}.")
        else:
            keys.append(f"{prefix}{name}")
    return keys


def test_every_config_key_is_documented_in_readme():
    missing = [k for k in config_keys() if f"`{k}`" not in README]
    assert not missing, f"README's Configuration table lacks: {missing}"


def test_quick_start_holds_exactly_the_two_commands_and_ci_runs_the_second():
    section = README.split("## Quick start", 1)[1]
    block = section.split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.strip() for line in block.splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test" in ci.splitlines()[-1]
