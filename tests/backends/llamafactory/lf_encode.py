"""Run inside LLaMA-Factory's environment: write, as JSON, the token ids LLaMA-Factory trains on for
every row of a registered dataset — its own loader, converter and template, as in its SFT
preprocessing. Rows: a list of [prompt_ids, response_ids] pairs, one pair per assistant-side turn.

usage: python lf_encode.py MODEL_DIR DATASET_DIR DATASET_NAME TEMPLATE OUT_JSON  (its own logs go to stdout)
"""

from __future__ import annotations

import json
import sys
import tempfile

from llamafactory.data import loader, parser
from llamafactory.data.template import get_template_and_fix_tokenizer
from llamafactory.hparams import DataArguments, ModelArguments
from transformers import AutoTokenizer, Seq2SeqTrainingArguments


def main(model_dir: str, dataset_dir: str, name: str, template_name: str, out: str) -> None:
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    data_args = DataArguments(dataset_dir=dataset_dir, dataset=name, template=template_name)
    template = get_template_and_fix_tokenizer(tokenizer, data_args)
    (attr,) = parser.get_dataset_list([name], dataset_dir)
    with tempfile.TemporaryDirectory() as tmp:
        model_args = ModelArguments(model_name_or_path=model_dir, cache_dir=tmp)
        train_args = Seq2SeqTrainingArguments(output_dir=tmp, report_to="none")
        aligned = loader._load_single_dataset(attr, model_args, data_args, train_args)
        rows = [
            template.encode_multiturn(tokenizer, ex["_prompt"] + ex["_response"], ex["_system"], ex["_tools"])
            for ex in aligned
        ]
    with open(out, "w", encoding="utf-8") as fh:
        json.dump({"rows": rows, "eos": tokenizer.eos_token, "chat_template": tokenizer.chat_template}, fh)


if __name__ == "__main__":
    main(*sys.argv[1:6])
