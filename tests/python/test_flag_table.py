"""The shared flags' table (src/cli/flag_table.h, printed by `bridgetune flags --json`): every command that takes a
shared flag shows the table's help text and default in its --help, `train --help` lists the essentials first and the
HF-only and Gaudi-only flags last, and the Python module's defaults are the CLI's."""
import functools
import inspect
import json
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
            i = flag_line(command, e["names"])
            assert i is not None, f"bridgetune {command} --help lacks {e['names']}"
            lines = help_lines(command)
            text = " ".join(" ".join(lines[i:i + 2]).split())  # a long flag's help is on the next line
            assert " ".join(e["help"].split()) in text, f"{command} {e['names']}: {text}"
            names_and_type = lines[i].split()
            if e["default"]:
                assert names_and_type[1].endswith("=" + e["default"]), f"{command}: {lines[i]} (table: {e['default']})"
            else:
                assert "=" not in names_and_type[1], f"{command}: {lines[i]} (table: no default)"


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
