// AlarmScheduling: the alarm chains built on PrayerPlanning's times, and the decisions of the
// service that rings them. A pure engine: it imports only ProofkitCore, PrayerPlanning and
// Foundation's value types, does no I/O and never reads the clock. Time is always a parameter
// (`now:`), so the service's decisions are unit-tested with an injected clock.
//
// Files:
//   AlarmChainPlanner.swift      rolling window of alarm chains, ids, budget, covered-until
//   AlarmReconciler.swift        desired plan + system alarms -> ordered operations; ledger
//   AlarmChainSession.swift      one chain while it rings: hold-off, proof, escape
//   AlarmRingScheduler.swift     which chain rings when, re-rings and the sound's schedule
//   AlarmSyncScheduler.swift     when to sync: one at a time, requests within 250 ms merged
//   AlarmHistory.swift           the days' outcomes and streaks
//   StopKey.swift                a key as the Stop button: key names and Linux input events
