"""Reading a configuration file: a bounded read of a regular file's UTF-8 text, and its YAML with duplicate keys
refused; every error names the file (and the line, where there is one).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from claims_pipeline.config.environment import ConfigError

# A config file is a few KB; reading more than this means it is no config file (a file that keeps growing). Only
# regular files are read: a FIFO nobody writes to blocked the command for ever, /dev/zero never ends.
MAX_CONFIG_BYTES = 4 * 1024 * 1024


def read_config_text(file: Path, noun: str = "config file") -> str:
    """The file's text: a regular file (a FIFO nobody writes to would block the read for ever, a device never
    ends), at most MAX_CONFIG_BYTES, UTF-8 (a BOM allowed). Anything else is a ConfigError."""
    try:
        # O_NONBLOCK: opening a FIFO to read blocks until a writer comes; the file is checked once open (no race)
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read {noun}: {exc.strerror or exc}") from None
    try:
        kind = _not_regular(os.fstat(fd).st_mode)
        if kind is not None:
            raise ConfigError(f"{file}: not a regular file ({kind}): not a {noun}")
        os.set_blocking(fd, True)
        with open(fd, "rb", closefd=False) as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read {noun}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{file}: larger than {MAX_CONFIG_BYTES // (1024 * 1024)} MB: not a {noun}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{file}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x}): not a {noun}") from None


def _not_regular(mode: int) -> str | None:
    import stat

    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "not a file"


def _refuse_duplicate_keys(node: yaml.Node, file: Path, path: tuple[str, ...] = (), seen: set[int] | None = None) -> None:
    """YAML keeps the last of two equal keys without a word (a second `fetch:` silently replaced the first
    section): any key given twice in one mapping, at any depth, is refused, naming both lines. Each node is
    looked at once: an alias shares its anchor's node, and a 'billion laughs' file of nested aliases would
    otherwise be walked 10^n times."""
    seen = set() if seen is None else seen
    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _refuse_duplicate_keys(item, file, path, seen)
    if not isinstance(node, yaml.MappingNode):
        return
    first_line: dict[tuple[str, str], int] = {}
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
            line = key.start_mark.line + 1
            earlier = first_line.get((key.tag, key.value))
            if earlier is not None:
                dotted = ".".join((*path, key.value))
                raise ConfigError(f"{file}: {dotted}: given twice (lines {earlier} and {line}); keep one")
            first_line[(key.tag, key.value)] = line
        _refuse_duplicate_keys(value, file, (*path, str(getattr(key, "value", "?"))), seen)


def parse_config_yaml(raw: str, file: Path) -> Any:
    """The YAML document, refusing duplicate keys; a syntax error names the file, line and column."""
    try:
        loader = yaml.SafeLoader(raw)  # its reader refuses control characters (an ESC, a bidi override) here
    except yaml.reader.ReaderError as exc:
        line, column = raw.count("\n", 0, exc.position) + 1, exc.position - (raw.rfind("\n", 0, exc.position) + 1) + 1
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        raise ConfigError(f"{file}:{line}:{column}: not valid YAML: character U+{code:04X} is not allowed "
                          "(a control or bidi character; remove it)") from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _refuse_duplicate_keys(node, file)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{file}:{mark.line + 1}:{mark.column + 1}" if mark else str(file)
        raise ConfigError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    except RecursionError:  # the parser recurses per level: '[[[[…' thousands deep is no config
        raise ConfigError(f"{file}: nested too deeply: not a config file") from None
    finally:
        loader.dispose()
