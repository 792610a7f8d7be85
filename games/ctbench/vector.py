"""Many CT-Bench games on one board under one contract stepped at once in compiled code, one player learning: the
engine behind the vectorised RL environment. The game is `game.State`'s on plain arrays: rounds, phases and turns
([CT-15]), offers and answers ([CT-16], [CT-17]), moves, Pay-for-Partner coverage and its honouring, the contract's
cover entries as the CT-Bench monitor enforces them ([CT-08], [CT-22]-[CT-24], the [CT-24a] switches), points at
the game's end ([CT-26]), the end conditions ([CT-13], [CT-14]) and the final scores ([CT-27]); the other player is
one of the deterministic planners of `agents.py` (planner, conditional, exploiter), its route search over the
board's simple paths as `Plan` does it. A game played here is the game `State` plays for the same actions (a test
checks that game by game)."""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import njit

from contractlang.interpreter import Rules
from contractlang.ir import CTBenchIR
from contractlang.vocab import BOARD_SIZE
from games.ctbench.board import CHIP_VALUE, COLOUR_ORDER, GOAL, GOAL_BONUS, INITIAL_CHIPS, PLAYERS, Board, simple_paths
from games.ctbench.board import neighbours as board_neighbours
from games.ctbench.game import MAX_ROUNDS, REPEAT_COUNTED_AFTER, REPEAT_LIMIT, Mode

# columns of the state array, one row per game; players 0 red, 1 blue; colours in COLOUR_ORDER; tiles r·4 + c
ROUND, PHASE, ACTOR, POS, CHIPS, FINISHED, FORFEITED, REJECTED = 0, 1, 2, 3, 5, 11, 12, 13  # POS 3, 4; CHIPS 5..10
OFFER, OFFER_A, OFFER_B = 14, 15, 18  # a pending offer: give / i_cover at 15..17, receive / you_cover at 18..20
PM_PLAYER, PM_TARGET, PM_COLOUR, PM_PAYER = 21, 22, 23, 24  # the move waiting for its payer's honour
DEFECTIONS, PROMISES, PROMISE_KEY, PROMISE_LEFT = 25, 27, 28, 34  # DEFECTIONS 25, 26; six promise slots each
USED, TRANSFERS, BLOCKED, HONOURED, END, SEEN, SCORE, POINTS_PAID = 40, 41, 42, 43, 44, 45, 46, 48  # SCORE 46, 47
COLUMNS = 49
PROPOSE, RESPOND, MOVE, HONOUR, OVER = 0, 1, 2, 3, 4
COVER_NONE, COVER_PAID, COVER_OFF_COLOUR, COVER_BLOCKED, COVER_FORFEIT = 0, 1, 2, 3, 4  # what `_cover` did
END_REASONS = (
    "",
    "both players reached the goal",
    "no further move is possible",
    f"the same state began {REPEAT_LIMIT} rounds",
    f"the {MAX_ROUNDS}-round cap",
)
TILES = BOARD_SIZE * BOARD_SIZE
GOAL_TILE = GOAL[0] * BOARD_SIZE + GOAL[1]
SIGNATURE = 2 + 6 + 1 + 12 + 4  # positions, chips, promise count, promise slots, used entries in 16-bit words
OPPONENTS = ("planner", "conditional", "exploiter")
"""The registered CT-Bench agents this engine plays in compiled code (agents.py); they draw nothing at random."""
MOVES = 10  # the first actions of CTBENCH_ACTIONS: no proposal, accept, reject, honour, refuse, pass, four steps
MAX_ENTRIES = 64  # the cover entries the `used` bitmask holds
INITIAL = np.array([INITIAL_CHIPS[p][c] for p in PLAYERS for c in COLOUR_ORDER], dtype=np.int64)


@njit(cache=True, inline="always")
def _acting(st, g, k):
    """The k-th player still acting this round (red before blue, the finished ones left out)."""
    f = st[g, FINISHED]
    if f & 1:
        return 1
    if f & 2:
        return 0
    return k


@njit(cache=True, inline="always")
def _n_acting(st, g):
    f = st[g, FINISHED]
    return 2 - (f & 1) - ((f >> 1) & 1)


@njit(cache=True, inline="always")
def _current(st, g):
    """`State.current_player`: the proposer's partner answers, the payer honours; -1 once over."""
    phase = st[g, PHASE]
    if phase == OVER:
        return -1
    if phase == RESPOND:
        return 1 - _acting(st, g, st[g, ACTOR])
    if phase == HONOUR:
        return st[g, PM_PAYER]
    return _acting(st, g, st[g, ACTOR])


@njit(cache=True, inline="always")
def _chips(st, g, player, colour):
    return st[g, CHIPS + 3 * player + colour]


@njit(cache=True)
def _signature(st, g, out):
    """`State._signature`: positions, chips, the promises in their order, the cover entries used."""
    out[0], out[1] = st[g, POS], st[g, POS + 1]
    for k in range(6):
        out[2 + k] = st[g, CHIPS + k]
    n = st[g, PROMISES]
    out[8] = n
    for k in range(6):
        out[9 + k] = st[g, PROMISE_KEY + k] if k < n else -1
        out[15 + k] = st[g, PROMISE_LEFT + k] if k < n else 0
    used = st[g, USED]
    for k in range(4):
        out[21 + k] = (used >> (16 * k)) & 0xFFFF
    h = np.int64(1469598103934665603)
    for k in range(SIGNATURE):
        h = (h ^ out[k]) * np.int64(1099511628211)
    return h


@njit(cache=True)
def _no_move_possible(st, g, colour, nbr):
    """[CT-14]: no unfinished player can pay for any adjacent tile even with the partner's chips."""
    for k in range(_n_acting(st, g)):
        p = _acting(st, g, k)
        here = st[g, POS + p]
        for d in range(4):
            t = nbr[here, d]
            if t >= 0:
                c = colour[t]
                if _chips(st, g, 0, c) + _chips(st, g, 1, c) > 0:
                    return False
    return True


@njit(cache=True)
def _end(st, g, reason, points):
    """The game ends: the monitor's points for every giver on the goal ([CT-26]), then the final scores,
    0 for a player who forfeited ([CT-24], [CT-27])."""
    st[g, PHASE] = OVER
    st[g, END] = reason
    for p in range(2):
        if st[g, POS + p] == GOAL_TILE:
            held = _chips(st, g, p, 0) + _chips(st, g, p, 1) + _chips(st, g, p, 2)
            st[g, SCORE + p] = GOAL_BONUS + CHIP_VALUE * held
        else:
            st[g, SCORE + p] = 0
    for k in range(points.shape[0]):
        giver, receiver, amount = points[k, 0], points[k, 1], points[k, 2]
        if (st[g, FINISHED] >> giver) & 1 and amount > 0:
            st[g, SCORE + giver] -= amount
            st[g, SCORE + receiver] += amount
            st[g, POINTS_PAID] += amount
    for p in range(2):
        if (st[g, FORFEITED] >> p) & 1:
            st[g, SCORE + p] = 0


@njit(cache=True)
def _start_round(st, g, colour, nbr, points, seen_hash, seen_sig, sig, max_rounds):
    """`State._start_round`: end the game if both finished, nobody can move, the same state began REPEAT_LIMIT
    rounds ([CT-13]) or the cap is reached ([CT-15]); otherwise the next round's proposals."""
    if st[g, FINISHED] == 3:
        _end(st, g, 1, points)
        return
    if _no_move_possible(st, g, colour, nbr):
        _end(st, g, 2, points)
        return
    h = _signature(st, g, sig)
    n = st[g, SEEN]
    if st[g, ROUND] >= REPEAT_COUNTED_AFTER:
        seen_hash[g, n] = h
        for k in range(SIGNATURE):
            seen_sig[g, n, k] = sig[k]
        n += 1
        st[g, SEEN] = n
    count = 0
    for i in range(n):
        if seen_hash[g, i] == h:
            same = True
            for k in range(SIGNATURE):
                if seen_sig[g, i, k] != sig[k]:
                    same = False
                    break
            count += same
    if count >= REPEAT_LIMIT:
        _end(st, g, 3, points)
        return
    if st[g, ROUND] >= max_rounds:
        _end(st, g, 4, points)
        return
    st[g, ROUND] += 1
    st[g, PHASE] = PROPOSE
    st[g, ACTOR] = 0


@njit(cache=True, inline="always")
def _advance(st, g, phase_done, colour, nbr, points, seen_hash, seen_sig, sig, max_rounds):
    """`State._advance`: the next actor of the phase, or the next phase or round."""
    nxt = st[g, ACTOR] + 1
    if nxt < _n_acting(st, g):
        st[g, PHASE] = phase_done
        st[g, ACTOR] = nxt
        return
    if phase_done == PROPOSE and _n_acting(st, g) > 0:
        st[g, PHASE] = MOVE
        st[g, ACTOR] = 0
        return
    _start_round(st, g, colour, nbr, points, seen_hash, seen_sig, sig, max_rounds)


@njit(cache=True, inline="always")
def _propose(st, g, has_offer, offer, t):
    """A proposal ([CT-16], [CT-17]): none passes the turn, an offer waits for the partner's answer."""
    if not has_offer:
        _advance(st, g, PROPOSE, t[0], t[1], t[2], t[3], t[4], t[5], t[6][0])
        return
    st[g, OFFER] = 1
    for k in range(6):
        st[g, OFFER_A + k] = offer[k]
    st[g, PHASE] = RESPOND


@njit(cache=True, inline="always")
def _add_promise(st, g, payer, colour, count):
    key = payer * 3 + colour
    n = st[g, PROMISES]
    for k in range(n):
        if st[g, PROMISE_KEY + k] == key:
            st[g, PROMISE_LEFT + k] += count
            return
    st[g, PROMISE_KEY + n] = key
    st[g, PROMISE_LEFT + n] = count
    st[g, PROMISES] = n + 1


@njit(cache=True)
def _respond(st, g, accept, pfp, t):
    """`State._respond`: an accepted trade swaps the chips when both hold them; an accepted arrangement adds
    promises both ways ([CT-17]); an offer not executed marks its proposer as rejected."""
    proposer = _acting(st, g, st[g, ACTOR])
    responder = 1 - proposer
    executed = False
    if accept and not pfp:
        enough = True
        for c in range(3):
            if _chips(st, g, proposer, c) < st[g, OFFER_A + c] or _chips(st, g, responder, c) < st[g, OFFER_B + c]:
                enough = False
        if enough:
            for c in range(3):
                moved = st[g, OFFER_B + c] - st[g, OFFER_A + c]
                st[g, CHIPS + 3 * proposer + c] += moved
                st[g, CHIPS + 3 * responder + c] -= moved
            executed = True
    elif accept:
        for c in range(3):
            if st[g, OFFER_A + c]:
                _add_promise(st, g, proposer, c, st[g, OFFER_A + c])
        for c in range(3):
            if st[g, OFFER_B + c]:
                _add_promise(st, g, responder, c, st[g, OFFER_B + c])
        executed = True
    st[g, OFFER] = 0
    for k in range(6):
        st[g, OFFER_A + k] = 0
    rejected = st[g, REJECTED] & ~(1 << proposer)
    st[g, REJECTED] = rejected if executed else rejected | (1 << proposer)
    _advance(st, g, PROPOSE, t[0], t[1], t[2], t[3], t[4], t[5], t[6][0])


@njit(cache=True, inline="always")
def _arrive(st, g, player, target, t):
    """`State._arrive`: the mover stands on the tile; on the goal it finishes and leaves the acting order, the
    next unfinished player keeping its turn index."""
    st[g, POS + player] = target
    if target == GOAL_TILE:
        idx = 0 if st[g, FINISHED] != 0 else player
        st[g, FINISHED] |= 1 << player
        st[g, ACTOR] = idx - 1
    _advance(st, g, MOVE, t[0], t[1], t[2], t[3], t[4], t[5], t[6][0])


@njit(cache=True, inline="always")
def _defect(st, g, payer):
    st[g, DEFECTIONS + payer] += 1


@njit(cache=True, inline="always")
def _pay_own(st, g, player, target, colour, t):
    """The mover pays its own chip, or the move fails ([CT-07])."""
    if _chips(st, g, player, colour) < 1:
        _advance(st, g, MOVE, t[0], t[1], t[2], t[3], t[4], t[5], t[6][0])
        return
    st[g, CHIPS + 3 * player + colour] -= 1
    _arrive(st, g, player, target, t)


@njit(cache=True, inline="always")
def _promise_for(st, g, beneficiary, colour):
    """The first promise paying `beneficiary`'s tiles of `colour` with some left (`coverage_for`), or -1."""
    for k in range(st[g, PROMISES]):
        key = st[g, PROMISE_KEY + k]
        if key // 3 != beneficiary and key % 3 == colour and st[g, PROMISE_LEFT + k] > 0:
            return k
    return -1


@njit(cache=True)
def _cover(st, g, player, target, colour, rules, cover):
    """The CT-Bench monitor's answer to `player`'s attempt onto `target`, a tile of `colour` ([CT-08],
    [CT-22]-[CT-24], [CT-24a] by the `rules` switches): the first open entry for the mover and the tile gives the
    giver's chip, spent on the move when it is the tile's colour, else the mover's; a giver without the chip
    blocks the payment (entry kept open) or forfeits (entry used). One of the COVER_ codes."""
    for k in range(cover.shape[0]):
        if (st[g, USED] >> k) & 1 or cover[k, 2] != player or cover[k, 0] != target:
            continue
        giver, paid_with = cover[k, 1], cover[k, 3]
        if rules[0]:  # tile_colour
            giver, paid_with = 1 - player, colour
        elif paid_with < 0:
            paid_with = colour
        if _chips(st, g, giver, paid_with) >= 1:
            st[g, USED] |= np.int64(1) << k
            st[g, TRANSFERS] += 1
            st[g, CHIPS + 3 * giver + paid_with] -= 1
            if paid_with == colour:
                return COVER_PAID
            st[g, CHIPS + 3 * player + paid_with] += 1
            return COVER_OFF_COLOUR
        if rules[1]:  # block_not_forfeit
            st[g, BLOCKED] += 1
            return COVER_BLOCKED
        st[g, USED] |= np.int64(1) << k
        st[g, FORFEITED] |= 1 << giver
        return COVER_FORFEIT
    return COVER_NONE


@njit(cache=True)
def _move(st, g, target, pfp, rules, cover, t):
    """`State._move`: a pass, or a move paid first by a cover entry (`_cover`), then by a Pay-for-Partner promise
    (asking its payer to honour it), then by the mover's own chip."""
    player = _current(st, g)
    if target < 0:
        _advance(st, g, MOVE, t[0], t[1], t[2], t[3], t[4], t[5], t[6][0])
        return
    colour = t[0][target]
    if _cover(st, g, player, target, colour, rules, cover) == COVER_PAID:
        _arrive(st, g, player, target, t)
        return
    k = _promise_for(st, g, player, colour) if pfp else -1
    if k >= 0:
        payer = st[g, PROMISE_KEY + k] // 3
        if _chips(st, g, payer, colour) >= 1:
            st[g, PM_PLAYER], st[g, PM_TARGET], st[g, PM_COLOUR], st[g, PM_PAYER] = player, target, colour, payer
            st[g, PHASE] = HONOUR
            return
        _defect(st, g, payer)
    _pay_own(st, g, player, target, colour, t)


@njit(cache=True)
def _honour(st, g, honour, t):
    """`State._honour`: the payer spends its chip and the move arrives, or it defects and the mover pays."""
    player, target, colour, payer = st[g, PM_PLAYER], st[g, PM_TARGET], st[g, PM_COLOUR], st[g, PM_PAYER]
    st[g, PHASE] = MOVE
    if honour:
        key = payer * 3 + colour
        for k in range(st[g, PROMISES]):
            if st[g, PROMISE_KEY + k] == key and st[g, PROMISE_LEFT + k] > 0:
                st[g, PROMISE_LEFT + k] -= 1
        st[g, CHIPS + 3 * payer + colour] -= 1
        st[g, HONOURED] += 1
        _arrive(st, g, player, target, t)
        return
    _defect(st, g, payer)
    _pay_own(st, g, player, target, colour, t)


@njit(cache=True, inline="always")
def _popcount(x):
    """Set bits of a 16-bit mask (SWAR: pairs, nibbles, bytes)."""
    x = x - ((x >> 1) & 0x5555)
    x = (x & 0x3333) + ((x >> 2) & 0x3333)
    x = (x + (x >> 4)) & 0x0F0F
    return (x + (x >> 8)) & 0x1F


@njit(cache=True, inline="always")
def _plan(st, g, player, h0, h1, h2, cover, paths, out):
    """`agents.Plan`: the route to the goal with the least shortfall, then the shortest, then the first in order
    (the tables list the paths shortest first, so it is the first with the least shortfall), counting PfP promises
    and the open cover entries paying the tile in its colour; `out` gets the shortfall, the shortfall and spare
    chips by colour, and the next tile (-1: none)."""
    colour, tiles, lengths, masks, counts, offsets = paths
    contract = 0
    for k in range(cover.shape[0]):
        if not (st[g, USED] >> k) & 1 and cover[k, 2] == player:
            tile = cover[k, 0]
            if cover[k, 3] < 0 or cover[k, 3] == colour[tile]:
                contract |= 1 << tile
    cover0 = cover1 = cover2 = 0
    for k in range(st[g, PROMISES]):
        key = st[g, PROMISE_KEY + k]
        if key // 3 != player:
            c = key % 3
            left = st[g, PROMISE_LEFT + k]
            if c == 0:
                cover0 += left
            elif c == 1:
                cover1 += left
            else:
                cover2 += left
    here = st[g, POS + player]
    best, best_short = -1, 0
    for p in range(offsets[here], offsets[here + 1]):
        n0 = max(0, counts[p, 0] - _popcount(masks[p, 0] & contract) - cover0)
        n1 = max(0, counts[p, 1] - _popcount(masks[p, 1] & contract) - cover1)
        n2 = max(0, counts[p, 2] - _popcount(masks[p, 2] & contract) - cover2)
        short = max(0, n0 - h0) + max(0, n1 - h1) + max(0, n2 - h2)
        if best < 0 or short < best_short:  # the paths come by length, then in order: the first least wins
            best, best_short = p, short
            out[1], out[2], out[3] = max(0, n0 - h0), max(0, n1 - h1), max(0, n2 - h2)
            out[4], out[5], out[6] = max(0, h0 - n0), max(0, h1 - n1), max(0, h2 - n2)
            if short == 0:  # no later path can come before it
                break
    out[0] = best_short
    out[7] = tiles[best, 1] if lengths[best] > 0 else -1


@njit(cache=True)
def _own_plan(st, g, player, cover, paths, out):
    _plan(
        st, g, player, _chips(st, g, player, 0), _chips(st, g, player, 1), _chips(st, g, player, 2), cover, paths, out
    )


@njit(cache=True)
def _opponent_acts(st, g, player, kind, pfp, visible, rules, cover, paths, t, mine, theirs, offer):
    """The planners of agents.py at `player`'s seat (`kind` 0 planner, 1 conditional, 2 exploiter), on what its
    observation shows ([CT-28])."""
    phase = st[g, PHASE]
    if phase == PROPOSE:
        if (st[g, REJECTED] >> player) & 1:  # give the partner a round before asking again
            _propose(st, g, False, offer, t)
            return
        _own_plan(st, g, player, cover, paths, mine)
        want = mine[1] + mine[2] + mine[3]
        give = 0
        for c in range(3):
            offer[c], offer[3 + c] = 0, mine[1 + c]
        if visible:
            _own_plan(st, g, 1 - player, cover, paths, theirs)
            for c in range(3):
                if theirs[1 + c]:
                    offer[c] = min(theirs[1 + c], mine[4 + c])
                    give += offer[c]
        if not want and not give:
            _propose(st, g, False, offer, t)
            return
        if pfp:
            _propose(st, g, True, offer, t)
            return
        if want:  # pay for what it needs with chips it can spare, one for one; `give` wins where both name a colour
            left = want
            paid = 0
            for c in range(3):
                k = min(left, mine[4 + c] - offer[c])
                if k > 0 and not mine[1 + c]:
                    if not offer[c]:
                        offer[c] = k
                    paid += 1
                    left -= k
            _propose(st, g, left == 0 and paid > 0, offer, t)
            return
        # nothing needed: swap what the partner lacks one for one against a colour the partner can spare
        for c in range(3):
            if not offer[c] and theirs[4 + c] >= give:
                offer[3 + c] = give
                _propose(st, g, True, offer, t)
                return
        _propose(st, g, False, offer, t)
        return
    if phase == RESPOND:
        accept = kind != 1 or st[g, DEFECTIONS + 1 - player] == 0
        if accept:
            _own_plan(st, g, player, cover, paths, mine)
            if not pfp:
                h0 = _chips(st, g, player, 0) + st[g, OFFER_A] - st[g, OFFER_B]
                h1 = _chips(st, g, player, 1) + st[g, OFFER_A + 1] - st[g, OFFER_B + 1]
                h2 = _chips(st, g, player, 2) + st[g, OFFER_A + 2] - st[g, OFFER_B + 2]
                if min(h0, min(h1, h2)) < 0:
                    accept = False
                else:
                    _plan(st, g, player, h0, h1, h2, cover, paths, theirs)
                    gained = 0
                    for c in range(3):
                        gained += st[g, OFFER_A + c] - st[g, OFFER_B + c]
                    accept = theirs[0] < mine[0] or (theirs[0] == mine[0] and gained >= 0)
            else:  # what this player promises must come out of its spare chips
                for c in range(3):
                    if st[g, OFFER_B + c] > mine[4 + c]:
                        accept = False
        _respond(st, g, accept, pfp, t)
        return
    if phase == HONOUR:
        if kind == 2:
            secured = (st[g, FINISHED] >> player) & 1 == 1
            if not secured:
                _own_plan(st, g, player, cover, paths, mine)
                secured = mine[0] == 0
            honour = not secured and mine[4 + st[g, PM_COLOUR]] >= 1
        else:
            honour = kind != 1 or st[g, DEFECTIONS + 1 - player] == 0
            if honour and not (st[g, FINISHED] >> player) & 1:
                _own_plan(st, g, player, cover, paths, mine)
                honour = mine[4 + st[g, PM_COLOUR]] >= 1
        _honour(st, g, honour, t)
        return
    _own_plan(st, g, player, cover, paths, mine)
    tile = np.int64(mine[7])
    if tile >= 0:
        colour = t[0][tile]
        covered = _chips(st, g, player, colour) >= 1 or _promise_for(st, g, player, colour) >= 0
        for k in range(cover.shape[0]):
            if not (st[g, USED] >> k) & 1 and cover[k, 2] == player and cover[k, 0] == tile:
                covered = True
        if not covered:
            tile = -1
    _move(st, g, tile, pfp, rules, cover, t)


@njit(cache=True)
def _legal(st, g, learner, a, nbr, offer_ok):
    """Whether action index `a` is legal for the learner now, as the environments' masks say."""
    if st[g, PHASE] == OVER or _current(st, g) != learner:
        return False
    phase = st[g, PHASE]
    if a >= MOVES:
        return phase == PROPOSE and offer_ok[a - MOVES]
    if phase == PROPOSE:
        return a == 0
    if phase == RESPOND:
        return a == 1 or a == 2
    if phase == HONOUR:
        return a == 3 or a == 4
    if a == 5:
        return True
    return a > 5 and nbr[st[g, POS + learner], a - 6] >= 0


@njit(cache=True)
def _observe(st, g, learner, visible, colour, nbr, offer_ok, obs, mask):
    """The learner's features (the layout of `CTBenchCore.observation`) and action mask."""
    phase = st[g, PHASE]
    partner = 1 - learner
    obs[g, 0] = st[g, ROUND]
    for k in range(4):
        obs[g, 1 + k] = phase == k
    obs[g, 5], obs[g, 6] = st[g, POS + learner] // BOARD_SIZE, st[g, POS + learner] % BOARD_SIZE
    for c in range(3):
        obs[g, 7 + c] = _chips(st, g, learner, c)
    if visible:
        obs[g, 10], obs[g, 11] = st[g, POS + partner] // BOARD_SIZE, st[g, POS + partner] % BOARD_SIZE
        for c in range(3):
            obs[g, 12 + c] = _chips(st, g, partner, c)
    else:
        for k in range(10, 15):
            obs[g, k] = -1
    obs[g, 15] = (st[g, FINISHED] >> learner) & 1
    responding = phase == RESPOND and st[g, OFFER]
    for k in range(6):
        obs[g, 16 + k] = st[g, OFFER_A + k] if responding else 0
    for k in range(TILES):
        obs[g, 22 + k] = colour[k]
    row = mask[g]
    for a in range(row.shape[0]):  # `_legal` for every index, phase by phase
        row[a] = 0
    if phase == OVER or _current(st, g) != learner:
        return
    if phase == PROPOSE:
        row[0] = 1
        for k in range(offer_ok.shape[0]):
            row[MOVES + k] = offer_ok[k]
    elif phase == RESPOND:
        row[1], row[2] = 1, 1
    elif phase == HONOUR:
        row[3], row[4] = 1, 1
    else:
        row[5] = 1
        for d in range(4):
            row[6 + d] = nbr[st[g, POS + learner], d] >= 0


@njit(cache=True)
def _fallback(st, g, learner, nbr, offer_ok):
    """`CTBenchCore.fallback`: doing nothing, the lowest of no proposal, reject, refuse, pass legal now."""
    for a in (0, 2, 4, 5):
        if _legal(st, g, learner, a, nbr, offer_ok):
            return a
    return 0


@njit(cache=True)
def _play(st, g, a, learner, pfp, rules, cover, offers, nbr, t, offer):
    """The learner's action index, as `CTBenchCore.decode` reads it."""
    if a >= MOVES:
        for k in range(6):
            offer[k] = offers[a - MOVES, k]
        _propose(st, g, True, offer, t)
    elif a == 0:
        _propose(st, g, False, offer, t)
    elif a <= 2:
        _respond(st, g, a == 1, pfp, t)
    elif a <= 4:
        _honour(st, g, a == 3, t)
    else:
        _move(st, g, -1 if a == 5 else nbr[st[g, POS + learner], a - 6], pfp, rules, cover, t)


@njit(cache=True)
def _opponent_moves(st, g, learner, kind, pfp, visible, rules, cover, paths, t, mine, theirs, offer):
    while st[g, PHASE] != OVER and _current(st, g) != learner:
        _opponent_acts(st, g, 1 - learner, kind, pfp, visible, rules, cover, paths, t, mine, theirs, offer)


@njit(cache=True)
def _step(
    actions, st, active, learner, kind, pfp, visible, rules, cover, offers, offer_ok, paths, t, obs, mask, reward,
    done, fallback,
):  # fmt: skip
    """Every active game takes its learner's action (a masked one falls back to doing nothing, flagged in
    `fallback`), then the opponent moves until the learner is asked again or the game ends; the reward is the
    learner's final score ([CT-27]) on the step that ends its game, 0 before."""
    nbr = t[1]
    mine, theirs, offer = np.zeros(8, np.int64), np.zeros(8, np.int64), np.zeros(6, np.int64)
    for g in range(st.shape[0]):
        if not active[g] or st[g, PHASE] == OVER:  # an ended game waits for `begin`
            done[g] = st[g, PHASE] == OVER
            reward[g] = 0.0
            continue
        a = actions[g]
        ok = 0 <= a < mask.shape[1] and _legal(st, g, learner, a, nbr, offer_ok)
        fallback[g] = not ok
        if not ok:
            a = _fallback(st, g, learner, nbr, offer_ok)
        _play(st, g, a, learner, pfp, rules, cover, offers, nbr, t, offer)
        _opponent_moves(st, g, learner, kind, pfp, visible, rules, cover, paths, t, mine, theirs, offer)
        over = st[g, PHASE] == OVER
        reward[g] = st[g, SCORE + learner] if over else 0.0
        done[g] = over
        _observe(st, g, learner, visible, t[0], nbr, offer_ok, obs, mask)


@njit(cache=True)
def _begin(games, st, learner, kind, pfp, visible, rules, cover, offer_ok, paths, t, obs, mask):
    """New games in rows `games`: the initial state ([CT-03]), round 1 begun, then the opponent's first moves."""
    mine, theirs, offer = np.zeros(8, np.int64), np.zeros(8, np.int64), np.zeros(6, np.int64)
    for g in games:
        for k in range(st.shape[1]):  # explicit loops: numba's slice assignment is slow per row
            st[g, k] = 0
        st[g, CHIPS + 0], st[g, CHIPS + 1], st[g, CHIPS + 2] = INITIAL[0], INITIAL[1], INITIAL[2]
        st[g, CHIPS + 3], st[g, CHIPS + 4], st[g, CHIPS + 5] = INITIAL[3], INITIAL[4], INITIAL[5]
        _start_round(st, g, t[0], t[1], t[2], t[3], t[4], t[5], t[6][0])
        _opponent_moves(st, g, learner, kind, pfp, visible, rules, cover, paths, t, mine, theirs, offer)
        _observe(st, g, learner, visible, t[0], t[1], offer_ok, obs, mask)


@cache
def path_tables(board: Board) -> tuple[np.ndarray, ...]:
    """The board's tile colours and, from every tile, its simple paths to the goal, shortest first and each length in
    `simple_paths`' order: their
    tiles, lengths, the tiles they enter of each colour as bitmasks and as counts, and where each source's paths
    start (what `_plan` searches). One set per board, shared by its engines, which only read it."""
    colour = np.array(
        [COLOUR_ORDER.index(board.colour((r, c))) for r in range(BOARD_SIZE) for c in range(BOARD_SIZE)], np.int64
    )
    rows, offsets = [], [0]
    for r in range(BOARD_SIZE):
        for c in range(BOARD_SIZE):
            found = sorted(simple_paths((r, c), GOAL), key=len)  # stable: shortest first, each length in order
            rows += [[a * BOARD_SIZE + b for a, b in p] for p in found]
            offsets.append(len(rows))
    tiles = np.full((len(rows), TILES), -1, np.int64)
    lengths = np.array([len(p) - 1 for p in rows], np.int64)
    masks = np.zeros((len(rows), 3), np.int64)
    counts = np.zeros((len(rows), 3), np.int64)
    for i, p in enumerate(rows):
        tiles[i, : len(p)] = p
        for tile in p[1:]:
            masks[i, colour[tile]] |= 1 << tile
            counts[i, colour[tile]] += 1
    return colour, tiles, lengths, masks, counts, np.array(offsets, np.int64)


def step_neighbours() -> np.ndarray:
    """Each tile's neighbour up, down, left and right (the order of the learners' step actions), -1 off the board."""
    nbr = np.full((TILES, 4), -1, np.int64)
    for r in range(BOARD_SIZE):
        for c in range(BOARD_SIZE):
            inside = set(board_neighbours((r, c)))
            for d, (dr, dc) in enumerate(((-1, 0), (1, 0), (0, -1), (0, 1))):
                if (r + dr, c + dc) in inside:
                    nbr[r * BOARD_SIZE + c, d] = (r + dr) * BOARD_SIZE + c + dc
    return nbr


class VectorGames:
    """`n` games of `ir` on `board` in `mode`, enforced by `rules`, the learner playing `role` against the compiled
    `opponent` (one of OPPONENTS). `offers` lists the learners' offers as six counts each (give then receive, or
    i_cover then you_cover) and `offer_ok` which the mode allows. Arrays are shared and rewritten in place: `obs`,
    `mask`, `reward`, `done`, `fallback`; `st` holds each game's state (its columns named above)."""

    def __init__(
        self,
        ir: CTBenchIR,
        board: Board,
        mode: Mode,
        rules: Rules,
        visible: bool,
        n: int,
        role: str,
        opponent: str,
        offers: np.ndarray,
        offer_ok: np.ndarray,
        features: int,
    ):
        if role not in PLAYERS:
            raise ValueError(f"role: {role!r}; red or blue")
        if opponent not in OPPONENTS:
            raise ValueError(f"opponent: {opponent!r}; the vectorised engine plays {', '.join(OPPONENTS)}")
        if len(ir.coverage) > MAX_ENTRIES:
            raise ValueError(f"the contract has {len(ir.coverage)} cover entries; the engine holds {MAX_ENTRIES}")
        self.n, self.ir = n, ir
        self.learner = PLAYERS.index(role)
        self.kind = OPPONENTS.index(opponent)
        self.pfp, self.visible = mode == "pfp", bool(visible)
        self.rules = np.array([rules.tile_colour, rules.block_not_forfeit], np.bool_)
        index = {p: i for i, p in enumerate(PLAYERS)}
        self.cover = np.array(
            [
                (e.tile[0] * BOARD_SIZE + e.tile[1], index[e.giver], index[e.receiver], _colour(e.colour))
                for e in ir.coverage
            ],
            np.int64,
        ).reshape(-1, 4)
        self.points = np.array([(index[p.giver], index[p.receiver], p.amount) for p in ir.points], np.int64)
        self.points = self.points.reshape(-1, 3)
        self.offers = np.ascontiguousarray(offers, dtype=np.int64)
        self.offer_ok = np.ascontiguousarray(offer_ok, dtype=np.bool_)
        self.paths = path_tables(board)
        self.nbr = step_neighbours()
        self.st = np.zeros((n, COLUMNS), np.int64)
        self.seen_hash = np.zeros((n, MAX_ROUNDS), np.int64)
        self.seen_sig = np.zeros((n, MAX_ROUNDS, SIGNATURE), np.int16)
        self.obs = np.zeros((n, features))
        self.mask = np.zeros((n, MOVES + len(self.offers)), np.int8)
        self.reward = np.zeros(n)
        self.done = np.zeros(n, np.bool_)
        self.fallback = np.zeros(n, np.bool_)
        # what the turn logic needs, passed as one tuple: colours, neighbours, points, repeat memory, the cap
        self.tables = (
            self.paths[0],
            self.nbr,
            self.points,
            self.seen_hash,
            self.seen_sig,
            np.zeros(SIGNATURE, np.int16),
            np.array([MAX_ROUNDS], np.int64),
        )

    def begin(self, games: np.ndarray) -> None:
        """New games in rows `games`."""
        _begin(
            games.astype(np.int64), self.st, self.learner, self.kind, self.pfp, self.visible, self.rules, self.cover,
            self.offer_ok, self.paths, self.tables, self.obs, self.mask,
        )  # fmt: skip

    def step(self, actions: np.ndarray, active: np.ndarray) -> None:
        _step(
            actions, self.st, active, self.learner, self.kind, self.pfp, self.visible, self.rules, self.cover,
            self.offers, self.offer_ok, self.paths, self.tables, self.obs, self.mask, self.reward, self.done,
            self.fallback,
        )  # fmt: skip

    def outcomes(self) -> dict[str, np.ndarray]:
        """Each game's results once it ended ([CT-24]-[CT-27]): the (red, blue) final `utilities` (scores), who
        `finished` on the goal and who `forfeited`, the cover entries' chip `transfers`, the payments `blocked`
        ([CT-24a]), the Pay-for-Partner coverages `honoured`, the `points` moved at the end, and the `end` reason
        (an index into END_REASONS)."""
        st = self.st
        return {
            "utilities": st[:, SCORE : SCORE + 2].copy(),
            "finished": np.stack([(st[:, FINISHED] >> p) & 1 for p in range(2)], axis=1).astype(bool),
            "forfeited": np.stack([(st[:, FORFEITED] >> p) & 1 for p in range(2)], axis=1).astype(bool),
            "transfers": st[:, TRANSFERS].copy(),
            "blocked": st[:, BLOCKED].copy(),
            "honoured": st[:, HONOURED].copy(),
            "points": st[:, POINTS_PAID].copy(),
            "end": st[:, END].copy(),
        }


def _colour(colour: str | None) -> int:
    return -1 if colour is None else COLOUR_ORDER.index(colour)
