"""The ``model.compile`` option: off by default, and harmless to checkpoints when on."""

from transformer_lab.training.module import Seq2SeqLitModule


def test_compile_is_off_by_default_in_the_config(compose_train):
    assert compose_train().model.compile is False


def test_a_compiled_module_keeps_the_state_dict_keys_of_an_eager_one():
    eager = Seq2SeqLitModule(16, 16, d_model=16, num_heads=2, d_ff=32)
    compiled = Seq2SeqLitModule(16, 16, d_model=16, num_heads=2, d_ff=32, compile=True)
    assert compiled.hparams.compile is True
    assert compiled.state_dict().keys() == eager.state_dict().keys()
