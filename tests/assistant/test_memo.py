from assistant import memo
from assistant.memo import MEMO_MAX, per_question


def _counting():
    calls = []

    @per_question()
    def double(x):
        calls.append(x)
        return 2 * x

    return double, calls


def test_a_repeated_call_within_a_question_computes_once():
    double, calls = _counting()
    assert [double(3), double(3), double(4), double(3)] == [6, 6, 8, 6]
    assert calls == [3, 4]


def test_a_new_question_computes_again():
    double, calls = _counting()
    double(3)
    memo.forget()
    double(3)
    assert calls == [3, 3]


def test_a_full_memo_starts_over_instead_of_growing():
    double, calls = _counting()
    for i in range(MEMO_MAX + 1):
        double(i)
    double(0)  # evicted when the memo filled up
    double(MEMO_MAX)  # stored after the memo started over
    assert calls.count(0) == 2 and calls.count(MEMO_MAX) == 1


def test_an_id_key_holds_its_argument_so_the_id_is_not_reused():
    seen = []

    @per_question(key=lambda obj: id(obj))
    def size(obj):
        seen.append(obj)
        return len(obj)

    for _ in range(3):
        assert size([1, 2]) == 2  # each list is a new object: if an id were reused, a stale hit would count 1 call
    assert len(seen) == 3


def test_extract_params_is_memoised_per_question():
    from assistant.understand.params import extract_params

    memo.forget()
    first = extract_params("70B on 4 nodes with tp_size 8")
    assert extract_params("70B on 4 nodes with tp_size 8") is first
    memo.forget()
    again = extract_params("70B on 4 nodes with tp_size 8")
    assert again is not first and again == first
