"""python-can: can.LogReader("LOG00001.SFL") through the can.io.message_reader entry point
yields the frames with channel, flags and timestamps."""
import can

import streamfat


def test_logreader_sfl(frames_image, tmp_path):
    img, expect = frames_image
    with streamfat.open_volume(img) as v, v.open("/LOG00001.SFL") as f:
        p = tmp_path / "LOG00001.SFL"
        p.write_bytes(f.read())
    msgs = list(can.LogReader(str(p)))
    assert len(msgs) == len(expect)
    for m, e in zip(msgs, expect):
        assert m.arbitration_id == e["id"] and m.channel == e["channel"]
        assert (m.is_extended_id, m.is_remote_frame, m.is_fd, m.bitrate_switch,
                m.error_state_indicator, m.is_error_frame) == \
            (e["ext"], e["rtr"], e["fd"], e["brs"], e["esi"], e["err"])
        assert m.dlc == e["dlc"] and bytes(m.data) == e["data"]
        assert abs(m.timestamp - e["ts"] / 1e9) < 1e-6
    # upper and lower case suffix
    q = tmp_path / "log2.sfl"
    q.write_bytes(p.read_bytes())
    assert len(list(can.LogReader(str(q)))) == len(expect)
