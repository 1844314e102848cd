#!/usr/bin/env python3
"""Export a Qwen3.5 (hybrid Gated DeltaNet + attention) safetensors folder to a stateful OpenVINO IR
with optimum-intel, then make the IR read its positions from the `position_ids` input.

Recipe only (it needs PyTorch, optimum-intel and an older transformers): never run in CI.
See tools/openvino/HYBRID.md for the versions and the venv.

Why the position fix: optimum-intel 2.2.0 (with transformers 5.2) traces Qwen3.5's text model
without passing position_ids on, so the traced graph builds its RoPE positions as
arange(past, past + seq_len) where `past` is the KV state's length; the `position_ids` input has
no consumer. Stateful, one sequence at a time, that is the same thing. After
SDPAToPagedAttention it is not: `past` becomes max_context_len - (tokens in the step) and
seq_len becomes 1, so every token of a step gets one position (wrong for a prompt of more than one
token per step and for a batch of sequences). Feeding the graph's position source from
`position_ids` (as the exporter intended) makes both forms right.

    nice python3 tools/openvino/export_hybrid.py --model test/fixtures/qwen35-tiny --out test/fixtures/qwen35-tiny-openvino
"""
import argparse
import json
import shutil
import sys
from pathlib import Path


def export(model_dir: Path, out_dir: Path) -> None:
    from optimum.intel import OVModelForCausalLM

    model = OVModelForCausalLM.from_pretrained(
        str(model_dir), export=True, compile=False, load_in_8bit=False, stateful=True
    )
    model.save_pretrained(str(out_dir))


def fix_positions(xml: Path) -> str:
    import numpy as np
    import openvino as ov
    from openvino import opset13 as ops

    core = ov.Core()
    model = core.read_model(str(xml))
    params = {p.get_friendly_name(): p for p in model.get_parameters()}
    pos = params.get("position_ids")
    if pos is None:
        raise SystemExit("the exported IR has no position_ids input")
    if len(pos.output(0).get_target_inputs()) > 0:
        return "position_ids already used: left as exported"
    # The rotary embedding's position source: Range -> Reshape [1, 1, T] -> Broadcast [3, B, T]
    # (the three M-RoPE sections; text positions are the same in all three).
    broadcasts = [
        op
        for op in model.get_ordered_ops()
        if op.get_type_name() == "Broadcast"
        and op.input_value(0).get_node().get_type_name() == "Reshape"
        and op.input_value(0).get_node().input_value(0).get_node().get_type_name() == "Range"
        and "rotary_emb" in next(iter(op.output(0).get_target_inputs())).get_node().get_friendly_name()
    ]
    if len(broadcasts) != 1:
        raise SystemExit(f"expected one Range->Reshape->Broadcast position source, found {len(broadcasts)}")
    bc = broadcasts[0]
    source = bc.input_value(0)
    value = pos.output(0)
    if value.get_element_type() != source.get_element_type():
        value = ops.convert(value, source.get_element_type()).output(0)
    unsq = ops.unsqueeze(value, ops.constant(np.array([0], dtype=np.int64)))  # [B, T] -> [1, B, T]
    bc.input(0).replace_source_output(unsq.output(0))
    model.validate_nodes_and_infer_types()
    tmp = xml.with_name("fixed.xml")
    ov.save_model(model, str(tmp), compress_to_fp16=False)
    tmp.replace(xml)
    xml.with_name("fixed.bin").replace(xml.with_suffix(".bin"))
    return f"RoPE positions now read position_ids (was {source.get_node().get_friendly_name()})"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--fix-only", action="store_true", help="only apply the position fix to an existing export")
    args = ap.parse_args()
    if not args.fix_only:
        if args.out.exists():
            shutil.rmtree(args.out)
        export(args.model, args.out)
    print(fix_positions(args.out / "openvino_model.xml"))
    cfg = json.loads((args.out / "config.json").read_text())
    print("exported", args.out, cfg.get("model_type"), cfg.get("architectures"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
