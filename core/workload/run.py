"""Running a workload on a platform, ending or crashing it on request, and the one metrics schema.

:func:`run_workload` starts a queue manager on a platform over a storage, runs one
workload spec with one seed in virtual time, optionally crashes it (after a number of
physical writes, at a virtual time, or the moment the workload's last call returns), and returns the metrics every platform reports in
the same schema (platforms add keys under ``platform_*``) with the
application journal. :func:`restart_run` restarts a queue manager on what a run left and,
given the journal, verifies it.

A run that does not crash ends with one of MQ's three shutdowns (``RunConfig.end``, issued
at ``end_at_s`` or, by default, when the workload's last call returns). What IBM documents
of them (endmqm, "Stop a queue manager", IBM MQ 9.3 docs, controlcmd/endmqm; reason codes
2161 q042200_ and 2162 q042210_; a platform whose stop differs says so where it is built, as
zos/platform.py does for STOP QMGR), and how the model does it:

* **controlled** (``endmqm -c``, the default): "the queue manager stops after all
  applications are disconnected. Any MQI calls currently being processed are completed."
  Calls keep working (so an application finishes the unit of work it is in), except where
  the application asked to be told – MQGMO_FAIL_IF_QUIESCING, which the model's
  applications use on their MQGETs: 2161 MQRC_Q_MGR_QUIESCING, at which the application
  ends. Each workload loop sees the quiesce before it starts a new unit and disconnects; then
  the shutdown checkpoint. At the workload's end it is exactly the run's ordinary end.
* **immediate** (``endmqm -i``): "the queue manager stops after all the MQI calls currently
  being processed are completed. Any MQI requests made after the command starts fail" –
  2162 MQRC_Q_MGR_STOPPING, counted in ``failed_calls``; a waiting MQGET's "wait has been
  canceled". An application told either reason code "should tidy up and end" (IBM's
  programmer response to both), and the model's do: each is refused one call at most
  (:mod:`mqlog.core.workload.workloads`). It does not wait for applications to disconnect.
  Units of work in flight are "rolled back when the queue manager is next started": the
  shutdown checkpoint lists them and restart backs them out – unless the platform backs them
  out as it stops (``Platform.stop_backs_out_in_flight``), and restart then finds nothing to
  back out.
  Units in doubt stay in doubt either way.
* **preemptive** (``endmqm -p``): "the queue manager might stop without waiting for
  applications to disconnect or for MQI calls to complete". Modelled as the kill of its
  processes: every write the OS accepted reaches the disk whole (no torn page, unlike the
  plug-pull crash), the log buffer not yet written is lost, there is no shutdown
  checkpoint, and restart recovers from the log.

Each platform names the command for each mode (``Platform.end_commands``), for the summary
and run.json.
"""

from __future__ import annotations

import inspect
from typing import Callable

import attrs
import simpy

from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.host.profiles import DEFAULT_HOST, HostProfile, get_host
from mqlog.core.errors import MqlogError, SimulatedCrash, StorageError, StorageFullError
from mqlog.core.disk.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.workload.journal import Journal
from mqlog.core.platform import Platform
from mqlog.core.qm.config import qmgr_of
from mqlog.core.qm.manager import QmConfig, QueueManager, refuse_queue_files_without_log
from mqlog.core.disk.storage import Storage
from mqlog.core.workload.workloads import MEASURED_COUNTERS, Context, applications

#: virtual time between progress reports (and checks that the workload still moves)
PROGRESS_STEP_US = 100_000.0


class WorkloadStalled(MqlogError):
    """Every application waits and nothing can wake them: the workload cannot finish."""


@attrs.frozen
class RunConfig:
    """Everything that determines a run: same config, same bytes, same metrics."""

    platform: str
    make_platform: Callable[[Storage], Platform]
    log_config: dict  # the platform's effective log parameters, for the metrics' "config"
    spec: object  # a WorkloadSpec
    seed: int = 0
    device: str = "ssd"
    #: pull the plug after this many storage writes: to every file, not the log's alone
    #: (the metrics' ``storage_writes``, not its ``physical_writes``)
    crash_after_writes: int | None = None
    crash_at_s: float | None = None
    #: pull the plug the moment the workload's last call returns, before any shutdown (IBM's
    #: kill -9 of a settled queue manager: ``mqlog run --crash-at end``)
    crash_at_end: bool = False
    #: the queue manager's settings; its MAXUMSGS and MAXDEPTH are in the metrics' config.qmgr
    qm_config: QmConfig = QmConfig()
    #: the storage's whole fault plan (a torn write, say); overrides ``crash_after_writes``
    fault_plan: FaultPlan | None = None
    #: keep the storage's record of every physical write (``RunResult.storage.write_log``)
    keep_write_log: bool = False
    #: the host profile (a built-in name, FILE.toml[:NAME] or a HostProfile): cores and CPU
    #: per MQI call; the metrics name it as given (a profile by its name)
    host: str | HostProfile = DEFAULT_HOST
    #: how the run ends when it does not crash (END_MODES; None: controlled, as endmqm's
    #: default), and the virtual time the end command is issued (None: when the workload's
    #: last call returns)
    end: str | None = None
    end_at_s: float | None = None


#: the shutdown modes (the module docstring says what IBM documents of each); each platform
#: names its own command for them (``Platform.end_commands``)
END_MODES = ("controlled", "immediate", "preemptive")


#: the metrics that say how a run ended (run.json keeps them, for ``restart`` to say what it restarts after)
ENDING_KEYS = ("ended", "end_command", "ended_at_s", "uows_in_flight_at_end", "uows_in_doubt_at_end",
               "uows_backed_out_at_stop", "in_flight_at_end", "writes_torn_at_crash")


def torn_text(torn: int) -> str:
    """What a plug pulled at a virtual time did to the writes on their way to the device."""
    return "no write in flight" if not torn else f"{torn} write{'' if torn == 1 else 's'} in flight, torn"


def ending_text(ending: dict) -> str:
    """One line: how a run ended (run.json's ``ended``, or the metrics)."""
    how = ending.get("ended")
    when = f" at {ending['ended_at_s']:.6f} virtual seconds" if ending.get("ended_at_s") is not None else ""
    if how in END_MODES:
        text = f"a{'n' if how == 'immediate' else ''} {how} shutdown ({ending.get('end_command')}){when}"
    elif how == "restart":
        text = "an earlier 'mqlog restart' (restart recovery and its checkpoint, no shutdown after it)"
    elif how == "crash":
        torn = ending.get("writes_torn_at_crash")
        text = f"a crash{when}" + ("" if torn is None else f" ({torn_text(torn)})")
    else:
        text = f"an abnormal end{when}"
    units = ending.get("uows_in_flight_at_end") or 0
    return text + (f", {units} unit(s) of work in flight: {ending.get('in_flight_at_end')}" if units else
                   ", no unit of work in flight")


def later_ending(platform: Platform, how: str, indoubt: int = 0) -> dict:
    """run.json's ``ended`` after a command that started the queue manager on a run's files:
    ``restart`` (``mqlog restart``: recovery and its checkpoint, no shutdown after it) or
    ``controlled`` (an administrative command, which ends with a controlled shutdown). Restart
    recovery backed out every unit in flight; those in doubt stay so."""
    return {"ended": how, "end_command": end_command(platform, "controlled") if how == "controlled" else None,
            "ended_at_s": None, "uows_in_flight_at_end": 0, "uows_in_doubt_at_end": indoubt,
            "uows_backed_out_at_stop": 0, "in_flight_at_end": "none", "writes_torn_at_crash": None}


def end_command(platform: Platform, mode: str) -> str:
    """The platform's own command for a shutdown mode (``endmqm -i``, ``STOP QMGR MODE(FORCE)``)."""
    return platform.end_commands[mode]


def _in_flight(qm: QueueManager) -> tuple[int, int]:
    """Units of work of the log not ended now: (in flight, in doubt)."""
    from mqlog.core.objects.uow import UowState

    units = [u for u in qm.uows.values() if u.logged]
    return (sum(u.state is UowState.ACTIVE for u in units), sum(u.state is UowState.PREPARED for u in units))


@attrs.define
class RunResult:
    metrics: dict
    journal: Journal
    qm: QueueManager
    storage: FaultInjectingStorage
    crashed: bool
    messages: list


def run_workload(cfg: RunConfig, storage: Storage, progress: Callable[[float, int], None] | None = None, *,
                 recorder=None, journal: Journal | None = None,
                 started: Callable[[QueueManager, object], None] | None = None) -> RunResult:
    """Run ``cfg`` on ``storage`` to the end (a controlled shutdown) or to the planned crash.

    ``recorder`` (a :class:`mqlog.core.workload.recording.Recorder`) records the run's file changes
    and journal events, for the fault campaign to materialise crash points from.

    On a storage a queue manager already used, the start is a restart (recovery first), and
    the workload carries on from what it recovered (``mqlog run --in``): ``journal`` is the
    application journal to extend (what the earlier runs' applications were told), and
    ``started(qm, report)`` is called between the restart and the workload's first call, with
    the recovery report (None for a new queue manager) – to verify the recovered queues
    against the journal before anything changes them; an error it raises ends the run."""
    plan = cfg.fault_plan if cfg.fault_plan is not None else FaultPlan(crash_after_writes=cfg.crash_after_writes)
    profile = get_profile(cfg.device)
    # a crash tears the device's writes only where the device can: whole atomic blocks land
    plan = attrs.evolve(plan, atomic_bytes=profile.atomic_write_bytes)
    if recorder is None:
        fs = FaultInjectingStorage(storage, plan, keep_write_log=cfg.keep_write_log)
        journal = journal if journal is not None else Journal()
    else:
        fs = recorder.storage(storage, plan, keep_write_log=cfg.keep_write_log)
        journal = recorder.journal()
    env = simpy.Environment()
    device = Device(env, profile)
    qm = QueueManager(env, cfg.make_platform(fs), fs, device, cfg.qm_config, get_host(cfg.host), cfg.seed)
    if qm.platform.attach is not None:
        qm.platform.attach(qm)  # the platform's own setup around it (kept queues, say)
    ctx = Context(env, qm, cfg.spec, cfg.seed, journal)

    ended = {}
    mode = cfg.end or "controlled"
    if mode not in END_MODES:
        raise MqlogError(f"end mode {mode!r}: give one of {', '.join(END_MODES)}")
    # a platform that backs in-flight units out as it stops does so here; the others leave them to restart
    back_out_at_stop = mode == "immediate" and qm.platform.stop_backs_out_in_flight

    def main():
        report = yield from qm.start()
        if started is not None:
            started(qm, report)
        if cfg.end_at_s is None or mode == "preemptive":
            # (the ordinary end, unchanged: the end command when the last call returns; a
            # preemptive end at a time is the loop's below, as a crash's)
            yield from applications(ctx, cfg.spec.workload)
            ended["workload_us"] = ended["command_us"] = env.now  # before the shutdown (its checkpoint, offloads)
            ctx.finished()
            if cfg.crash_at_end or mode == "preemptive":
                return  # the plug is pulled (or the processes killed) below, before any shutdown
            qm.end(mode)
        else:
            work = env.process(applications(ctx, cfg.spec.workload))
            yield work | env.timeout(max(0.0, cfg.end_at_s * 1e6 - env.now))
            ended["command_us"] = env.now
            qm.end(mode)
            if mode == "controlled":
                yield work  # the applications finish their units of work and disconnect
            else:
                yield from qm.calls_finished()  # the calls in progress complete; no more are accepted
            ended["workload_us"] = env.now
            ctx.finished()
        ended["in_flight"] = _in_flight(qm)
        if back_out_at_stop:
            yield from qm.back_out_in_flight()
        yield from qm.shutdown()

    proc = env.process(main())
    crash_at = cfg.crash_at_s * 1e6 if cfg.crash_at_s is not None else None
    if mode == "preemptive" and cfg.end_at_s is not None:
        crash_at = cfg.end_at_s * 1e6  # the processes are killed then, as the plug is pulled at a crash time
    crashed = killed = False
    abnormal_end = None
    try:
        while not proc.triggered:
            target = env.now + PROGRESS_STEP_US
            if crash_at is not None:
                target = min(target, crash_at)
            if env.peek() == float("inf"):
                raise WorkloadStalled(f"workload {cfg.spec.workload!r} stalled at {env.now / 1e6:.6f} virtual "
                                      f"seconds: every application is waiting")
            # Stop at the step's end or as soon as the workload finishes, whichever is first.
            env.run(until=env.any_of([proc, env.timeout(target - env.now)]))
            if progress is not None:
                progress(env.now / 1e6, qm.writer.stats.log_records if qm.writer else 0)
            if crash_at is not None and env.now >= crash_at and not proc.triggered:
                ended["command_us"] = env.now
                ended["in_flight"] = _in_flight(qm)
                if mode == "preemptive":
                    fs.kill()
                    killed = True
                else:
                    ended["torn"] = fs.power_loss()
                    crashed = True
                break
        if proc.triggered and not proc.ok:
            raise proc.value
        if cfg.crash_at_end and not crashed:
            ended["torn"] = fs.power_loss()  # at the virtual time the last call returned: nothing ran after it
            crashed = True
            ended["in_flight"] = _in_flight(qm)
        elif mode == "preemptive" and not killed:
            fs.kill()  # when the last call returned: the queue manager never began a shutdown
            killed = True
            ended["in_flight"] = _in_flight(qm)
    except SimulatedCrash:
        crashed = True
    except StorageError as exc:
        # The log cannot be written any more (a write error, a full file system, the end of
        # the RBA range), or a queue file cannot: the queue manager ends abnormally, as after
        # a crash – what was not on disk is gone – and the files are left for a restart
        # (after, say, converting to 8-byte RBAs or freeing space). Nothing whose force or
        # flush failed was acknowledged.
        fs.crash()
        crashed = True
        abnormal_end = str(exc)
        qm.drain_space_events()
        # (SimPy hands a failed event's exception on as a copy whose __cause__ is the
        # original; the writer's names the storage error under it)
        cause = exc
        while cause is not None and not isinstance(cause, StorageFullError):
            cause = getattr(cause, "cause", None) or cause.__cause__
        if cause is not None:
            qm.say("log-disk-full", reason=str(cause))
        qm.messages.append(f"The queue manager ended abnormally: {exc}")
    journal.crash()
    metrics = collect_metrics(cfg, qm, ctx, env, crashed)
    # Writes to every file of the storage (log, queue files, control data, archives) that
    # were made: what ``crash_after_writes`` counts, so that a user picks N from it (the
    # log's own writes are ``physical_writes``, fewer). The write a crash cut was not made.
    metrics["storage_writes"] = fs.physical_writes - (fs.crash_write is not None)
    metrics["abnormal_end"] = abnormal_end
    metrics.update(_ending(cfg, mode, qm, env, ended, crashed=crashed, killed=killed, abnormal=abnormal_end))
    # A crash asked for at a point the run never reached is no crash: say so, not a quiet
    # clean shutdown that looks as if the crash had been tested.
    metrics["crash_not_reached"] = None
    if not crashed and cfg.fault_plan is None and cfg.crash_after_writes is not None:
        metrics["crash_not_reached"] = (f"the crash point (after {cfg.crash_after_writes} storage writes) was never "
                                        f"reached: the run ended with a controlled shutdown after "
                                        f"{metrics['storage_writes']} storage writes")
    elif not crashed and cfg.crash_at_s is not None:
        metrics["crash_not_reached"] = (f"the crash point (at {cfg.crash_at_s:g} virtual seconds) was never reached: "
                                        f"the run ended with a controlled shutdown at {env.now / 1e6:.6f} virtual "
                                        f"seconds")
    # the virtual time the workload's last call returned: throughput is measured over it, not
    # over the shutdown after it (which waits for a z/OS offload in progress, say)
    metrics["workload_s"] = ended.get("workload_us", env.now) / 1e6
    # The measured window: from the end of the workload's set-up – or of its ramp, where it
    # has one (requester-responder: every requester's first reply) – to its last call (what
    # IBM's steady-state figures, amqsrua's intervals, see); none if the set-up never ended.
    mark = ctx.set_up_at
    if mark is not None:
        # (to the workload's last call; a crash or a kill before it ends the window where it struck)
        end = ctx.finished_at or {**metrics, "commits_timed": ctx.counters.commits_timed,
                                  "commit_elapsed_us": ctx.counters.commit_elapsed_us}
        metrics["measured_from"] = mark["from"]
        metrics["measured_s"] = metrics["workload_s"] - mark["us"] / 1e6
        for key in (*MEASURED_COUNTERS, "round_trips"):
            metrics[f"measured_{key}"] = end[key] - mark[key]
        # a commit's elapsed time, MQCMIT to its return, over the measured window's commits
        timed = end["commits_timed"] - mark["commits_timed"]
        metrics["measured_commit_elapsed_us"] = ((end["commit_elapsed_us"] - mark["commit_elapsed_us"]) / timed
                                                 if timed else 0.0)
    return RunResult(metrics, journal, qm, fs, crashed, list(qm.messages))


def _ending(cfg: RunConfig, mode: str, qm: QueueManager, env, ended: dict, *, crashed: bool, killed: bool,
            abnormal: str | None) -> dict:
    """How the run ended, for the metrics (and run.json, so that ``restart`` can say what it
    restarts after): the way, the platform's command, when, and the units of work of the log
    not ended then and what became of them."""
    if abnormal is not None:
        how = "abnormal"
    elif crashed:
        how = "crash"
    else:
        how = mode
    active, indoubt = ended.get("in_flight", _in_flight(qm))
    if how == "immediate" and qm.backed_out_at_stop:
        fate = "backed out by the queue manager as it stopped"
    elif active and how in ("controlled", "immediate"):
        fate = "listed by the shutdown checkpoint: the next restart backs them out"
    elif active:
        # (a unit whose records never left the log buffer is not in the log at all)
        fate = "not ended: the next restart backs out those the log holds"
    else:
        fate = "none"
    out = {
        "ended": how,
        "end_command": end_command(qm.platform, mode) if how in END_MODES else None,
        # the end command's (or the crash's) virtual time; for a run that failed part way, its end
        "ended_at_s": ended.get("command_us", env.now) / 1e6,
        "end_at_s": cfg.end_at_s,
        "uows_in_flight_at_end": active,
        "uows_in_doubt_at_end": indoubt,
        "uows_backed_out_at_stop": qm.backed_out_at_stop,
        "in_flight_at_end": fate,
        # a plug pulled at a virtual time: the writes on their way to the device then, each torn
        "writes_torn_at_crash": ended.get("torn"),
        "end_not_reached": None,
    }
    if how in END_MODES and cfg.end_at_s is not None and ended.get("command_us", 0.0) < cfg.end_at_s * 1e6:
        out["end_not_reached"] = (f"the end command (at {cfg.end_at_s:g} virtual seconds) came after the workload "
                                  f"ended: it was issued at {ended['command_us'] / 1e6:.6f} virtual seconds, when "
                                  f"the last call returned")
    return out


def collect_metrics(cfg: RunConfig, qm: QueueManager, ctx: Context, env: simpy.Environment, crashed: bool) -> dict:
    """The metrics schema shared by every platform, plus ``platform_*`` extras."""
    stats = qm.writer.stats if qm.writer is not None else None
    c = qm.counters
    space = qm.platform.space
    s = stats.as_dict() if stats is not None else {}
    metrics = {
        "platform": cfg.platform,
        "workload": cfg.spec.workload,
        "seed": cfg.seed,
        "device": cfg.device,
        "host": cfg.host if isinstance(cfg.host, str) else cfg.host.name,
        # the platform's log parameters, and the queue manager's attributes by MQ's names
        "config": {**cfg.log_config, "qmgr": qmgr_of(cfg.qm_config)},
        "params": dict(cfg.spec.params),
        "fingerprint": ctx.fingerprint(),
        "crashed": crashed,
        "virtual_s": env.now / 1e6,
        "messages_put": c.messages_put,
        "messages_got": c.messages_got,
        "commits": c.commits,
        "backouts": c.backouts,
        "round_trips": ctx.counters.round_trips,
        # the host's cores: CPU the MQI calls took (applications' own included, by kind)
        # and the time calls queued for a free core
        "host_cores": qm.cpu.profile.cores,
        "cpu_busy_us": qm.cpu.busy_us,
        "cpu_wait_us": qm.cpu.wait_us,
        "cpu_app_us": qm.cpu.by_kind["app"],
        "cpu_mqi_us": qm.cpu.by_kind["mqi"],
        "cpu_log_us": qm.cpu.by_kind["log"],
        "cpu_force_us": qm.cpu.by_kind["force"],
        "cpu_lock_us": qm.cpu.by_kind["lock"],
        "cpu_logger_us": qm.cpu.by_kind["logger"],
        # amqsrua's STATQ lock contention, over every queue: attempts to take a queue's lock,
        # and those that had to wait for another caller to release it
        "queue_lock_requests": sum(q.mutex.requests for q in qm.queues.values() if q.mutex is not None),
        "queue_lock_contended": sum(q.mutex.contended for q in qm.queues.values() if q.mutex is not None),
        # a codec's CPU: compressing on the putting calls' paths; expanding at a restart
        # or a rebuild (RECOVER CFSTRUCT), in that one's own time
        "cpu_compress_us": qm.cpu.by_kind["compress"],
        "cpu_expand_us": qm.cpu.by_kind["expand"],
        # the storage device (mqlog.core.disk.devices): its I/Os, their service (latency +
        # transfer), the time they queued for a slot, and how much longer transfers took
        # because they shared the device's channel
        **{f"device_{k}": v for k, v in qm.device.counters().items()},
        "forces": s.get("forces", 0),
        "logical_bytes": s.get("logical_bytes", 0),
        "physical_bytes": s.get("physical_bytes", 0),
        "logical_writes": s.get("logical_writes", 0),
        "forces_waited": s.get("forces_waited", 0),
        "log_records": s.get("log_records", 0),
        "write_cycles": s.get("write_cycles", 0),
        "physical_writes": s.get("physical_writes", 0),
        # of those, I/Os in flight beside another of their cycle (dual logging's copies of
        # new CIs) and I/Os held until the earlier ones of their cycle finished (a rewritten
        # CI's second copy, TripleWrite's in-place write after its spare copy)
        "concurrent_writes": s.get("concurrent_writes", 0),
        "ordered_writes": s.get("ordered_writes", 0),
        "archive_bytes": s.get("archive_bytes", 0),
        "archive_writes": s.get("archive_writes", 0),
        # background copies (z/OS archive offload): their reads, the virtual time they ran
        # (reads and writes, summed over copies) and the writer's waits for one
        "offload_reads": s.get("offload_reads", 0),
        "offload_read_bytes": s.get("offload_read_bytes", 0),
        "offload_us": s.get("offload_us", 0.0),
        "offload_waits": s.get("offload_waits", 0),
        "offload_wait_us": s.get("offload_wait_us", 0.0),
        "write_size_short_bytes": s.get("write_size_short_bytes", 0.0),
        "write_size_long_bytes": s.get("write_size_long_bytes", 0.0),
        "write_size_max_bytes": s.get("write_size_max_bytes", 0),
        "write_size_histogram": s.get("write_size_histogram", []),
        "write_time_short_us": s.get("write_time_short_us", 0.0),
        "write_time_long_us": s.get("write_time_long_us", 0.0),
        "write_time_max_us": s.get("write_time_max_us", 0.0),
        "write_time_total_us": s.get("write_time_total_us", 0.0),
        # the writer's task busy and I/O busy (IBM's "Logger task busy" / "Logger I/O busy")
        "primary_writes": s.get("primary_writes", 0),
        "primary_write_time_us": s.get("primary_write_time_us", 0.0),
        "writer_busy_us": s.get("writer_busy_us", 0.0),
        "io_busy_us": s.get("io_busy_us", 0.0),
        "write_time_max_at_us": s.get("write_time_max_at_us", 0.0),
        "write_time_short_max_us": s.get("write_time_short_max_us", 0.0),
        "write_time_long_max_us": s.get("write_time_long_max_us", 0.0),
        "log_buffer_bytes": s.get("log_buffer_bytes", 0),
        "worst_write_by_file": s.get("worst_write_by_file", {}),
        "buffer_waits": s.get("buffer_waits", 0),
        "threshold_writes": s.get("threshold_writes", 0),  # cycles WRTHRSH alone started
        # how often a write ends on, or starts by rewriting, a partial page: what
        # LogWriteIntegrity and z/OS dual logging pay for
        "pages_written": s.get("pages_written", 0),
        "partial_page_writes": s.get("partial_page_writes", 0),
        "partial_page_rewrites": s.get("partial_page_rewrites", 0),
        # cycles that only rewrote that partial page: a caller's few records written alone
        "rewrite_only_cycles": s.get("rewrite_only_cycles", 0),
        "checkpoints": c.checkpoints,
        # each checkpoint's reason, time and the messages and log records before it
        "checkpoint_marks": [dict(m) for m in qm.checkpoint_marks],
        "log_switches": space.switches,
        "active_log_capacity_bytes": space.capacity_bytes,
        "active_log_used_bytes_max": qm.log_used_max,
        "log_in_use_series": [[round(t / 1e6, 6), used] for t, used in qm.log_used_series],
        "log_full_events": c.log_full_events,
        "uows_rolled_back": c.uows_rolled_back,
        "uows_rolled_forward": c.uows_rolled_forward,
        "log_full_refusals": c.log_full_refusals,
        "log_full_wait_us": c.log_full_wait_us,
        "media_images": c.media_images,
        "media_image_bytes": c.media_image_bytes,
        "queues_recreated": c.queues_recreated,
        "shunts": c.shunts,
        "shunted_bytes": c.shunted_bytes,
        # each round of shunting written: its unit, the checkpoint it followed, operations, bytes
        "shunt_rounds": [dict(r) for r in qm.shunt_rounds],
        "shunts_failed": c.shunts_failed,
        "archive_offloads": space.archive_offloads,
        "compression_in_bytes": c.compression_in_bytes,
        "compression_out_bytes": c.compression_out_bytes,
        # queue buffers that outgrew their size and were written to their files in the
        # putting call: into the host's page cache (distributed; the bytes written there are
        # ``queue_file_bytes_cached``) or by writes the call does not wait for (z/OS); what
        # reached the log's device (sharing its channel with the log's writes), at checkpoints
        # or behind the calls, is ``queue_file_bytes_written``
        "queue_spills": c.spills,
        "queue_file_bytes_cached": c.queue_file_bytes_cached,
        "queue_file_bytes_written": c.queue_file_bytes_written,
        "queue_file_bytes_read": c.queue_file_bytes_read,
        # spills written in the putting call: the queue's writes behind the calls had reached
        # the platform's bound (z/OS: 95% of its buffer pool waiting for write I/O, QPSTDMC)
        "queue_sync_writes": c.queue_sync_writes,
        "applications_backed_out": ctx.counters.backed_out_by_qmgr,
        # every refused MQI call (MAXDEPTH's 2053, MAXUMSGS's 2024, a full log's 2102, ...)
        # by reason code name, {"reason": number, "calls": n}: the application was told and
        # went on, and nothing it was refused is counted as done
        "failed_calls": {name: dict(v) for name, v in sorted(ctx.counters.failed_calls.items())},
        "error_log": qm.platform.error_log,
    }
    metrics.update({f"platform_{k}": v for k, v in space.metrics().items()})
    if qm.platform.codec is not None:  # z/OS COMPLOG: the QJSTCMP*/QJSTDEC* figures
        metrics.update({f"platform_{k}": v for k, v in qm.platform.codec.stats().items()})
    if qm.writer is not None:
        metrics.update({f"platform_{k}": v for k, v in space.resource_monitor(qm.writer.next_address, s).items()})
    return metrics


def restart_run(make_platform: Callable[[Storage], Platform], storage: Storage, *, device: str = "ssd",
                host: str = DEFAULT_HOST, qm_config: QmConfig = QmConfig(), journal: Journal | None = None,
                progress: Callable[[int], None] | None = None):
    """Restart a queue manager on ``storage``; returns (report, verdict or None, qm).
    ``progress`` is called with the count of records replayed so far, page by page.

    A queue manager whose first checkpoint never reached the disk was never created: there
    is nothing to recover, nothing is written, and the report says so."""
    from mqlog.core.recovery.outcome import RecoveryReport

    env = simpy.Environment()
    platform = make_platform(storage)
    if platform.restart_refusal is not None:
        raise MqlogError(platform.restart_refusal)
    qm = QueueManager(env, platform, storage, Device(env, get_profile(device)), qm_config, get_host(host))
    qm.restart_progress = progress
    if platform.space.load_control() is None:
        refuse_queue_files_without_log(storage)
        report = RecoveryReport(messages=["No queue manager to recover: it crashed before its first checkpoint "
                                          "reached the disk, so it was never created"])
    else:
        proc = env.process(qm.start())
        env.run(until=proc)
        report = proc.value
    verdict = journal.verify(qm) if journal is not None else None
    return report, verdict, qm


def administer(make_platform: Callable[[Storage], Platform], storage: Storage, action, *, device: str = "ssd",
               host: str = DEFAULT_HOST, qm_config: QmConfig = QmConfig(), on_exit: Callable[[QueueManager], None] | None = None):
    """Start the queue manager left on ``storage`` (restart recovery first), run
    ``action(qm)`` – an administrative command such as rcdmqimg; a generator if it takes
    virtual time – and end with
    a controlled shutdown. Returns (the action's result, qm); the queue manager's messages
    are in ``qm.messages``. ``on_exit(qm)`` runs however it ends – an error part way
    included, when what was done before it is already on disk."""
    env = simpy.Environment()
    platform = make_platform(storage)
    qm = QueueManager(env, platform, storage, Device(env, get_profile(device)), qm_config, get_host(host))
    if platform.space.load_control() is None:
        refuse_queue_files_without_log(storage)
        raise MqlogError("the queue manager was never created (no checkpoint on disk): nothing to administer")

    def session():
        yield from qm.start()
        result = action(qm)
        if inspect.isgenerator(result):
            result = yield from result
        yield from qm.shutdown()
        return result

    proc = env.process(session())
    try:
        env.run(until=proc)
    finally:
        if on_exit is not None:
            on_exit(qm)
    return proc.value, qm
