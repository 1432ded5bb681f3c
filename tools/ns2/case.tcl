# One differential-testing case in ns-2.35's SCTP CMT module (Agent/SCTP/CMT).
#
# Usage: ns case.tcl KEY=VALUE ... path=RATE_BPS:DELAY_MS:LOSS:QUEUE ...
#
# Keys (defaults in brackets): seed [1], stop (simulated seconds) [40], rbuf (bytes)
# [65536], rtx (eCmtRtxPolicy_: 0 ASAP, 1 SAME, 2 SSTHRESH, 3 LOSSRATE, 4 CWND) [4],
# sfr, cuc, dac (useCmtReordering_, useCmtCwnd_, useCmtDelAck_) [1], pf (useCmtPF_) [0],
# pfcwnd (cmtPFCwnd_) [2], mtu (mtu_; dataChunkSize_ = mtu - 32) [1500], delack
# (the receiver's useDelayedSacks_) [1], sackdelay (sackDelay_, s) [0.2], minrto (minRto_,
# s) [1.0], lossrev (1: the loss model on the SACK direction too) [0],
# trace (file for the packet trace, or "none" for an untraced run, e.g. to time ns-2)
# [trace.tr], agent (file for the sender agent's own trace lines, or "none") [agent.tr],
# fail (I:T — path I's link goes down for good at T simulated seconds, both ways) [none].
# Each path=... adds one path: a duplex link of RATE_BPS bit/s with one-way DELAY_MS and
# drop-tail queues of QUEUE packets, with Bernoulli loss LOSS on the data direction only
# (ns-2's `lossmodel` puts the error model at the head of the link, before the queue).
# Everything else is ns-2's default. tools/ns2/diff.py writes the matching cmtlab scenario.

array set opt {seed 1 stop 40 rbuf 65536 rtx 4 sfr 1 cuc 1 dac 1 pf 0 pfcwnd 2 mtu 1500 delack 1 sackdelay 0.2 minrto 1.0 lossrev 0 trace trace.tr agent agent.tr fail none}
set paths {}
foreach arg $argv {
    set kv [split $arg =]
    set k [lindex $kv 0]
    set v [join [lrange $kv 1 end] =]
    if {$k == "path"} {
        lappend paths [split $v :]
    } elseif {[info exists opt($k)]} {
        set opt($k) $v
    } else {
        puts stderr "case.tcl: unknown key `$k`"
        exit 2
    }
}
if {[llength $paths] == 0} {
    puts stderr "case.tcl: give at least one path=RATE_BPS:DELAY_MS:LOSS:QUEUE"
    exit 2
}

Trace set show_sctphdr_ 1
set ns [new Simulator]
global defaultRNG
$defaultRNG seed $opt(seed)
if {$opt(trace) != "none"} {
    set tr [open $opt(trace) w]
    $ns trace-all $tr
}
if {$opt(agent) != "none"} {
    set agtr [open $opt(agent) w]
}

# Node ids: 0 sender, 1 receiver, then 2+2i / 3+2i the two ends of path i.
set s [$ns node]
set r [$ns node]
set i 0
foreach p $paths {
    lassign $p rate delay loss queue
    set si($i) [$ns node]
    set ri($i) [$ns node]
    $ns multihome-add-interface $s $si($i)
    $ns multihome-add-interface $r $ri($i)
    $ns duplex-link $si($i) $ri($i) $rate ${delay}ms DropTail
    $ns queue-limit $si($i) $ri($i) $queue
    $ns queue-limit $ri($i) $si($i) $queue
    if {$loss > 0} {
        set em [new ErrorModel]
        $em unit pkt
        $em set rate_ $loss
        $em ranvar [new RandomVariable/Uniform]
        $ns lossmodel $em $si($i) $ri($i)
        if {$opt(lossrev)} {
            set emr [new ErrorModel]
            $emr unit pkt
            $emr set rate_ $loss
            $emr ranvar [new RandomVariable/Uniform]
            $ns lossmodel $emr $ri($i) $si($i)
        }
    }
    incr i
}

set snd [new Agent/SCTP/CMT]
$ns multihome-attach-agent $s $snd
$snd set mtu_ $opt(mtu)
$snd set dataChunkSize_ [expr {$opt(mtu) - 32}]
$snd set minRto_ $opt(minrto)
$snd set cmtPFCwnd_ $opt(pfcwnd)
$snd set numOutStreams_ 1
$snd set initialRwnd_ $opt(rbuf)
$snd set useCmtReordering_ $opt(sfr)
$snd set useCmtCwnd_ $opt(cuc)
$snd set useCmtDelAck_ $opt(dac)
$snd set eCmtRtxPolicy_ $opt(rtx)
$snd set useCmtPF_ $opt(pf)
if {[info exists agtr]} {
    $snd attach $agtr
    $snd trace frCount_
    $snd trace cwnd_
}
set rcv [new Agent/SCTP/CMT]
$ns multihome-attach-agent $r $rcv
$rcv set initialRwnd_ $opt(rbuf)
$rcv set useCmtDelAck_ $opt(dac)
$rcv set mtu_ $opt(mtu)
$rcv set dataChunkSize_ [expr {$opt(mtu) - 32}]
$rcv set useDelayedSacks_ $opt(delack)
$rcv set sackDelay_ $opt(sackdelay)
$ns connect $snd $rcv
$snd set-primary-destination $ri(0)
# RTX_LOSSRATE reads each destination's configured loss rate (the "oracle").
for {set j 0} {$j < $i} {incr j} {
    $snd set-destination-lossrate $ri($j) [lindex [lindex $paths $j] 2]
}

if {$opt(fail) != "none"} {
    lassign [split $opt(fail) :] fi ft
    $ns rtmodel-at $ft down $si($fi) $ri($fi)
}

set ftp [new Application/FTP]
$ftp attach-agent $snd
$ns at 0.0 "$ftp start"
$ns at $opt(stop) "finish"
proc finish {} {
    global ns tr agtr
    if {[info exists tr]} {
        $ns flush-trace
        close $tr
    }
    if {[info exists agtr]} {
        close $agtr
    }
    exit 0
}
$ns run
