"""Backbones: a backbone option resolved offline to its tokenizer, chat template and weights.

`backbones` is the kind registry every backend, curation and evaluation ask (`backbone_dir`,
`template_family`); `run_weights` says which weights a stage starts from; `tiny`, `tiny_qwen`, `gguf`
(a fetched GGUF converted once to safetensors) and `hub` are the kinds; `chat_template` and `corpus`
are slca's own template and the SFT text rendered with one; `real_files` hands out the fetched real-model files; `load` loads a model directory.
"""
