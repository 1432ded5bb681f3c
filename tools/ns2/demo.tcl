# ns-2.35 (SCTP CMT module) version of scenarios/demo.toml, for cross-checking cmtlab.
# Usage: ns demo.tcl SEED MARKOV(0|1) D1 D2 D3 L1 L2 L3 [DURATION]
#   D* = access delays in ms, L* = uniform loss rates (the values cmtlab drew, see
#   summary.json "drawn"). Writes trace.tr and prints goodput from the sender's
#   cumulative-ack trace. See tools/ns2/README.md.
set seed [lindex $argv 0]
set markov [lindex $argv 1]
set delay [lrange $argv 2 4]
set loss [lrange $argv 5 7]
set duration 120.0
if {[llength $argv] > 8} { set duration [lindex $argv 8] }
set rates {11Mb 10Mb 2Mb}

Trace set show_sctphdr_ 1
set ns [new Simulator]
global defaultRNG
$defaultRNG seed $seed
set tr [open trace.tr w]
$ns trace-all $tr

set s [$ns node]
set r [$ns node]
for {set i 0} {$i < 3} {incr i} {
    set si($i) [$ns node]
    set ri($i) [$ns node]
    set ro($i) [$ns node]
    $ns multihome-add-interface $s $si($i)
    $ns multihome-add-interface $r $ri($i)
    $ns duplex-link $si($i) $ro($i) [lindex $rates $i] [lindex $delay $i]ms DropTail
    $ns duplex-link $ro($i) $ri($i) 100Mb 50ms DropTail
    $ns queue-limit $si($i) $ro($i) 50
    $ns queue-limit $ro($i) $si($i) 50
    $ns queue-limit $ro($i) $ri($i) 100
    $ns queue-limit $ri($i) $ro($i) 100
    # Uniform loss on the access link, both directions (as cmtlab's duplex links).
    foreach {a b} [list $si($i) $ro($i) $ro($i) $si($i)] {
        set em [new ErrorModel]
        $em unit pkt
        $em set rate_ [lindex $loss $i]
        $em ranvar [new RandomVariable/Uniform]
        $em drop-target [new Agent/Null]
        $ns lossmodel $em $a $b
    }
    # 1 % two-state Markov loss (time-based: 20 ms bad per 1.98 s good, docs/algorithms.md §11.2),
    # on the core link so it acts in series with the uniform model.
    if {$markov} {
        foreach {a b} [list $ro($i) $ri($i) $ri($i) $ro($i)] {
            set mm [new ErrorModel/TwoStateMarkov {1.98 0.02} time]
            $mm drop-target [new Agent/Null]
            $ns lossmodel $mm $a $b
        }
    }
}

set snd [new Agent/SCTP/CMT]
$ns multihome-attach-agent $s $snd
$snd set mtu_ 1500
$snd set dataChunkSize_ 1468
$snd set numOutStreams_ 1
$snd set initialRwnd_ 65536
$snd set useCmtReordering_ 1
$snd set useCmtCwnd_ 1
$snd set useCmtDelAck_ 1
$snd set eCmtRtxPolicy_ 4
$snd set useCmtPF_ 0
$snd set initialCwnd_ 3
set rcv [new Agent/SCTP/CMT]
$ns multihome-attach-agent $r $rcv
$rcv set initialRwnd_ 65536
$rcv set useCmtDelAck_ 1
$ns connect $snd $rcv
$snd set-primary-destination $ri(0)

set ftp [new Application/FTP]
$ftp attach-agent $snd
$ns at 0.0 "$ftp start"
$ns at $duration "finish"
proc finish {} {
    global ns tr
    $ns flush-trace
    close $tr
    exit 0
}
$ns run
