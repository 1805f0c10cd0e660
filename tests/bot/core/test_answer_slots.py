"""Answer slots lent while an answer only waits (issue 17, item 10): only the answering task lends its slot.
A task the answer started (the Teams SDK's stream drain inherits the answer's context) that waits out a rate
limit must neither let a second answer run beside the first nor keep the slot once the answer ended — after
`max_concurrent_answers` such leaks the bot would answer nobody."""

from __future__ import annotations

import asyncio

from bot.core.answering import _Slot, _slot, slot_lent


def test_a_task_started_by_the_answer_neither_lends_its_slot_nor_keeps_it():
    async def run() -> tuple[bool, bool, bool]:
        slots = asyncio.Semaphore(1)
        drains: list[asyncio.Task] = []

        async def answer() -> bool:
            async with _Slot(slots) as slot:
                _slot.set(slot)

                async def drain() -> None:  # started by the answer, waits out a Retry-After
                    async with slot_lent():
                        await asyncio.sleep(0.2)

                drains.append(asyncio.create_task(drain()))
                await asyncio.sleep(0.05)
                return slots.locked()  # still answering: nobody else may have the slot

        during = await answer()
        second_started = await _acquired_within(slots, 0.01)  # the answer ended while the drain waited
        if second_started:
            slots.release()
        await asyncio.gather(*drains)
        return during, second_started, slots.locked()

    held_while_answering, free_when_done, leaked = asyncio.run(run())
    assert held_while_answering
    assert free_when_done
    assert not leaked


def test_the_answering_task_itself_lends_its_slot_while_it_waits():
    async def run() -> bool:
        slots = asyncio.Semaphore(1)
        async with _Slot(slots) as slot:
            _slot.set(slot)
            async with slot_lent():
                other = await _acquired_within(slots, 0.05)
                slots.release()
        return other and not slots.locked()

    assert asyncio.run(run())


async def _acquired_within(slots: asyncio.Semaphore, seconds: float) -> bool:
    try:
        await asyncio.wait_for(slots.acquire(), seconds)
        return True
    except TimeoutError:
        return False
