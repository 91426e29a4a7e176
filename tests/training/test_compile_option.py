"""The ``compile`` option: off by default, and harmless to checkpoints when on."""


def test_compile_is_off_by_default_in_the_config(compose_train):
    assert compose_train().compile is False


def test_a_compiled_module_keeps_the_state_dict_keys_of_an_eager_one(lab_module):
    sizes = dict(src_vocab_size=16, tgt_vocab_size=16, d_model=16, num_heads=2, d_ff=32)
    eager = lab_module(**sizes)
    compiled = lab_module(**sizes, compile=True)
    assert compiled.hparams.compile is True
    assert compiled.state_dict().keys() == eager.state_dict().keys()
