"""The shared flags' table (src/cli/flag_table.h, printed by `bridgetune flags --json`): every command that takes a
shared flag shows the table's help text and default (its own variant's, where it has one) in its --help, no flag
name two commands take is missing from the table, an entry's environment variable is read when the flag is not
given, `train --help` lists the essentials first and the HF-only and Gaudi-only flags last, and the Python module's
defaults are the CLI's."""
import functools
import inspect
import json
import os
import re
import subprocess

import bridgetune
from bridgetune import _native
from conftest import BRIDGETUNE, run_cli


@functools.lru_cache(maxsize=None)
def table():
    return json.loads(run_cli("flags", "--json"))


@functools.lru_cache(maxsize=None)
def help_lines(command):
    r = subprocess.run([BRIDGETUNE, command, "--help"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return (r.stdout + r.stderr).splitlines()


def entry(name):
    return next(e for e in table() if e["names"].split(",")[0] == name)


def for_command(e, command):
    """The entry's (default, help) as `command` shows them."""
    v = next((v for v in e["variants"] if v["command"] == command), None)
    return (e["default"], e["help"]) if v is None else (v["default"], v["help"])


@functools.lru_cache(maxsize=None)
def commands():
    lines = run_cli("--help").splitlines()
    at = lines.index("Subcommands:")
    return [line.split()[0] for line in lines[at + 1:] if line.startswith("  ")]


def flag_line(command, names):
    """The index of the flag's line in `command`'s --help, or None."""
    first = names.split(",")[0]
    for i, line in enumerate(help_lines(command)):
        if line.startswith("  " + first + " ") or line.startswith("  " + first + ","):
            return i
    return None


def groups(command):
    return [line[:-1] for line in help_lines(command) if line and not line.startswith(" ") and line.endswith(":")]


def group_of(command, names):
    lines = help_lines(command)
    i = flag_line(command, names)
    return next(line[:-1] for line in reversed(lines[:i]) if line and not line.startswith(" "))


def test_every_command_shows_each_shared_flag_with_the_tables_help_and_default():
    assert len(table()) >= 20
    for e in table():
        for command in e["commands"]:
            default, help_text = for_command(e, command)
            i = flag_line(command, e["names"])
            assert i is not None, f"bridgetune {command} --help lacks {e['names']}"
            lines = help_lines(command)
            text = " ".join(" ".join(lines[i:i + 2]).split())  # a long flag's help is on the next line
            assert " ".join(help_text.split()) in text, f"{command} {e['names']}: {text}"
            names_and_type = re.split(r"\s{2,}", lines[i].strip())[0]  # the help starts after 2+ spaces
            if default:
                assert re.search("=" + re.escape(default) + r"(\s|$)", names_and_type), \
                    f"{command}: {lines[i]} (table: {default})"
            else:
                assert "=" not in names_and_type, f"{command}: {lines[i]} (table: no default)"
            if e["env"]:
                assert f"(Env:{e['env']})" in names_and_type, f"{command}: {lines[i]}"


def test_every_flag_two_commands_take_is_in_the_table():
    takers = {}
    for command in commands():
        for line in help_lines(command):
            m = re.match(r"  (--[a-z0-9_]+)", line)
            if m and m.group(1) != "--help":
                takers.setdefault(m.group(1), set()).add(command)
    in_table = {e["names"].split(",")[0]: set(e["commands"]) for e in table()}
    for flag, cmds in sorted(takers.items()):
        if len(cmds) > 1:
            assert flag in in_table, f"{flag} ({', '.join(sorted(cmds))}) is not in the flag table"
        if flag in in_table:
            assert cmds == in_table[flag], f"{flag}: taken by {sorted(cmds)}, table says {sorted(in_table[flag])}"


def test_cache_dir_takes_hf_hub_cache_unless_given(tmp_path):
    """--cache_dir's environment variable (flag > HF_HUB_CACHE > HF_HOME/hub ...), as the model lookup shows it."""
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "from_env")}
    env.pop("HF_HOME", None)
    for extra, where in (([], "from_env"), (["--cache_dir", str(tmp_path / "from_flag")], "from_flag")):
        r = subprocess.run([BRIDGETUNE, "info", "--model_name_or_path", "org/model", *extra], capture_output=True,
                           text=True, env=env)
        assert r.returncode != 0
        assert str(tmp_path / where / "models--org--model") in r.stderr, r.stderr


def test_tokenize_takes_trains_tokenizer_name_and_keeps_tokenizer_dir(tokenizer_dir):
    for flag in ("--tokenizer_name", "--tokenizer_dir"):
        r = subprocess.run([BRIDGETUNE, "tokenize", flag, tokenizer_dir, "--no_special_tokens"], input="the dog\n",
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("[") and r.stdout.strip().endswith("]"), r.stdout


def test_train_help_lists_the_essentials_first_and_hf_and_gaudi_only_flags_last():
    g = groups("train")
    assert g[0] == "Options" and g[1].startswith("Essentials"), g  # "Options" holds -h,--help alone
    assert g[-2:] == ["Gaudi-only (accepted, ignored)",
                      "HF TrainingArguments without an effect here (accepted with a note, or refused)"], g
    essentials = help_lines("train")[help_lines("train").index(g[1] + ":") + 1:]
    essentials = essentials[:next(i for i, line in enumerate(essentials) if not line.strip())]
    for flag in ("--model_name_or_path", "--train_file", "--output_dir", "--per_device_train_batch_size",
                 "--learning_rate", "--num_train_epochs", "--max_steps"):
        assert any(line.startswith("  " + flag + " ") for line in essentials), (flag, essentials)
    assert group_of("train", "--resume_from_checkpoint") == "Logging, checkpoints & resume"
    i = flag_line("train", "--eval_steps")
    text = " ".join(help_lines("train")[i:i + 2])
    assert "only at the end" in text and "every --logging_steps" in text, text


def test_python_defaults_are_the_clis():
    d = _native.DEFAULTS
    assert str(d["num_workers"]) == entry("--dataloader_num_workers")["default"]
    assert str(d["max_seq_length"]) == entry("--max_seq_length")["default"]
    assert str(d["seed"]) == entry("--seed")["default"]
    assert d["image_column"] == entry("--image_column")["default"]
    assert d["on_bad_sample"] == entry("--on_bad_sample")["default"]
    assert d["device"] == entry("--device")["default"]
    assert str(d["per_device_train_batch_size"]) == entry("--per_device_train_batch_size")["default"]
    assert str(d["per_device_eval_batch_size"]) == entry("--per_device_eval_batch_size")["default"]
    assert str(d["prefetch_batches"]) == entry("--prefetch_batches")["default"]
    assert str(d["decoded_cache_mb"]) == entry("--decoded_cache_mb")["default"]
    assert d["revision"] == entry("--model_revision")["default"]
    params = inspect.signature(bridgetune.DataLoader.__init__).parameters
    for name in ("num_workers", "max_seq_length", "seed", "image_column", "on_bad_sample", "prefetch_batches",
                 "decoded_cache_mb", "revision"):
        assert params[name].default == d[name], name
    assert params["caption_column"].default is None  # the format's own, decided in src/source/source.cpp
    for fn in (bridgetune.preprocessing.model_folder, bridgetune.preprocessing.preprocess):
        assert inspect.signature(fn).parameters["revision"].default == d["revision"], fn.__name__
    assert inspect.signature(bridgetune.Tokenizer.encode_batch).parameters["max_length"].default == d["max_seq_length"]
