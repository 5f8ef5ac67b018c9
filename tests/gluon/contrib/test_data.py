"""gluon.contrib.data: IntervalSampler; the text datasets are refused clearly."""
import pytest

from gluon import contrib


def test_interval_sampler_rollover_and_not():
    assert list(contrib.data.IntervalSampler(13, interval=3)) == [0, 3, 6, 9, 12, 1, 4, 7, 10,
                                                                  2, 5, 8, 11]
    assert list(contrib.data.sampler.IntervalSampler(10, 3, rollover=False)) == [0, 3, 6, 9]
    with pytest.raises(ValueError, match="interval 4 must be <= length 3"):
        contrib.data.IntervalSampler(3, 4)


def test_text_datasets_need_downloads():
    with pytest.raises(ModuleNotFoundError, match="WikiText2"):
        contrib.data.text  # noqa: B018
